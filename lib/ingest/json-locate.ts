/**
 * Where does a JSON text stop being valid? Node 20's JSON.parse messages often carry no
 * position ("Unexpected token 'o', …"), so body errors locate the offset with this small
 * validating scanner. Returns the offset of the first offending character (text.length for an
 * unexpected end), or null when the text is valid JSON.
 */
export function locateJsonError(text: string): number | null {
  let i = 0;
  const n = text.length;
  class Stop {
    constructor(readonly at: number) {}
  }
  const fail = (at = i): never => {
    throw new Stop(at);
  };
  const ws = () => {
    while (i < n && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) fail(Math.min(i + k, n));
    i += word.length;
  };
  const string = () => {
    i++; // opening quote
    while (true) {
      if (i >= n) fail(n);
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 0x20) fail();
      if (c === 92) {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i + 1);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail(Math.min(i + 1, n));
      } else i++;
    }
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === "-") fail();
    i += m![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 1000) fail();
    ws();
    if (i >= n) fail(n);
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      while (true) {
        ws();
        if (text[i] !== '"') fail(Math.min(i, n));
        string();
        ws();
        if (text[i] !== ":") fail(Math.min(i, n));
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        fail(Math.min(i, n));
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      while (true) {
        value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        fail(Math.min(i, n));
      }
    }
    if (c === '"') return string();
    if (c === "t") return literal("true");
    if (c === "f") return literal("false");
    if (c === "n") return literal("null");
    return number();
  };
  try {
    value(0);
    ws();
    return i < n ? i : null;
  } catch (e) {
    if (e instanceof Stop) return e.at;
    throw e;
  }
}
