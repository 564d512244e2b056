import { describe, expect, it, vi } from "vitest";
import { normalizeBatch } from "./batch";
import { deriveKey, keyMaterial } from "./key";
import { parseCapture } from "./capture";
import { MAX_RAW_CHARS } from "./limits";
import { MASK, isCredentialName, maskCredential, maskEvent, maskPayload, maskText } from "./mask";
import { captureNames, normalizeCapture } from "./test-fixtures";

const NOW = Date.UTC(2026, 10, 29, 12);

// Made-up keys of the real shapes (none of them works anywhere).
const ANTHROPIC = "sk-ant-api03-Xq9vR2mT7wLp4KzN8bYc1dFg6hJs3aQe5uWo0iEr-2tYx7ZAAA";
const OPENAI_PROJECT = "sk-proj-4fGh8JkL2mNp6QrS9tUv1WxY3zAb5CdE7fGh";
const OPENAI = "sk-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Df";
const GITHUB = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
const GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz";
const AWS = "AKIAIOSFODNN7EXAMPLE";
const GOOGLE = "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe";
const SLACK = "xoxb-2934728123-1039485729384-AbCdEfGhIjKlMnOpQrStUvWx";
const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const INGEST_TOKEN = "rr_3q2-7wKpZx9LmNvB4cD8eF1gH5jK0lMn";
const API_KEY = "rrk_Tz8yXw6vU4tS2rQ0pO9nM7lK5jI3hG1f";

describe("maskText", () => {
  it.each([
    // Header lines and JSON as agents and the mock provider logged them (shared fixtures, real-clients-2).
    ["authorization: Bearer test-token", `authorization: Bearer ${MASK}`],
    ['{"authorization":"Bearer dummy-oauth-token","x-api-key":"dummy-key"}', `{"authorization":"Bearer ${MASK}","x-api-key":"${MASK}"}`],
    ['"headers":{"content-type":"application/json","authorization":"Bearer dummy-key","originator":"codex_exec"}', `"headers":{"content-type":"application/json","authorization":"Bearer ${MASK}","originator":"codex_exec"}`],
    ["Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==", `Proxy-Authorization: Basic ${MASK}`],
    ["Cookie: session=abc123; csrftoken=def456", `Cookie: ${MASK}`],
    ["set-cookie: sid=s3cr3t; Path=/; HttpOnly", `set-cookie: ${MASK}; HttpOnly`],
    ["API-KEY: abcdef123456", `API-KEY: ${MASK}`],
    [`X-Api-Key: ${ANTHROPIC}`, `X-Api-Key: sk-ant-…${MASK}`],
    // Bearer tokens anywhere, keeping what kind of credential they are.
    [`curl -H 'Authorization: Bearer ${INGEST_TOKEN}'`, `curl -H 'Authorization: Bearer rr_…${MASK}'`],
    [`sent bearer ${OPENAI_PROJECT} to the proxy`, `sent bearer sk-proj-…${MASK} to the proxy`],
    // Key shapes in provider error text.
    [`Incorrect API key provided: ${OPENAI_PROJECT}. You can find your API key at https://platform.openai.com`, `Incorrect API key provided: sk-proj-…${MASK}. You can find your API key at https://platform.openai.com`],
    [`invalid x-api-key ${ANTHROPIC}`, `invalid x-api-key sk-ant-…${MASK}`],
    [`key ${OPENAI} revoked`, `key sk-…${MASK} revoked`],
    [`${GITHUB} / ${GITHUB_PAT}`, `ghp_…${MASK} / github_pat_…${MASK}`],
    [`aws ${AWS} google ${GOOGLE}`, `aws AKIA…${MASK} google AIza…${MASK}`],
    [`slack ${SLACK} jwt ${JWT}.`, `slack xoxb-…${MASK} jwt eyJ…${MASK}.`],
    [`token ${INGEST_TOKEN}, key ${API_KEY}`, `token rr_…${MASK}, key rrk_…${MASK}`],
    // Key/value pairs, bare, quoted and JSON inside a string.
    ["OPENAI_API_KEY=hunter2hunter2 next", `OPENAI_API_KEY=${MASK} next`],
    ["db api_key=abc&apikey: xyz&page=2", `db api_key=${MASK}&apikey: ${MASK}&page=2`],
    ['{"password": "correct horse battery staple", "user": "ana"}', `{"password": "${MASK}", "user": "ana"}`],
    ['{\\"client_secret\\":\\"s3 cr3t\\"}', `{\\"client_secret\\":\\"${MASK}\\"}`],
    ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", `AWS_SECRET_ACCESS_KEY=${MASK}`],
    ["refresh_token=r1.abcdef access_token: a2.ghijk", `refresh_token=${MASK} access_token: ${MASK}`],
    ["proxy https://ana:hunter2@proxy.internal:8080/v1 refused", `proxy https://ana:${MASK}@proxy.internal:8080/v1 refused`],
  ])("%s", (text, masked) => {
    expect(maskText(text)).toBe(masked);
    expect(maskText(masked)).toBe(masked);
  });

  it.each([
    // Telemetry that names credentials without holding one (real-clients-2 OTel attributes, Claude's init line).
    '{"key":"auth.header_name","value":{"stringValue":"authorization"}}',
    '{"key":"auth.env_openai_api_key_present","value":{"boolValue":false}}',
    '"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197"',
    '"anthropic-beta":"claude-code-20250219,oauth-2025-04-20,thinking-token-count-2026-05-13"',
    // Retry advice the engine reads stays whole.
    "Rate limit reached for gpt-5.5. Please try again in 20s. x-ratelimit-reset-tokens: 20s",
    "You've hit your usage limit. Try again at 3:05 PM. input_tokens: 1234, output_tokens: 56",
    "Reconnecting... 2/5 (stream disconnected before completion: bearer tokens are optional here)",
    "the task-scheduler-and-risk-assessment-module failed",
    "POST http://127.0.0.1:4500/v1/responses failed; mail ops@example.com",
    "token",
    "",
  ])("leaves %s", (text) => {
    expect(maskText(text)).toBe(text);
  });
});

// Made-up keys of further shapes.
const STRIPE = "sk_live_51Hx4bK2eZvKYlo2C8nQ3rT7wAbCd";
const STRIPE_TEST = "rk_test_4eC39HqLyjWDarjtT1zdp7dc";
const NPM = "npm_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78";
const GITLAB = "glpat-xY9vR2mT7wLp4KzN8bYc";
const HUGGING_FACE = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
const GITHUB_OAUTH = "gho_16C7e42F292c6912E7710c838347Ae178B4a";
const SLACK_APP = "xapp-1-A0123456789-0123456789012-abcdef0123456789";

describe("names by their words, pairs, URLs and more key shapes", () => {
  it.each([
    // camelCase, PascalCase, SCREAMING_SNAKE, kebab and dotted names whose last word is a credential word.
    ["clientSecret=abc123def next", `clientSecret=${MASK} next`],
    ['{"dbPassword":"hunter2hunter2"}', `{"dbPassword":"${MASK}"}`],
    ["githubToken: ghx-123456789", `githubToken: ${MASK}`],
    ['"anthropicApiKey": "my-key-1234"', `"anthropicApiKey": "${MASK}"`],
    ["GitHubToken=abcdef123", `GitHubToken=${MASK}`],
    ["db.password=p4ssw0rd!", `db.password=${MASK}`],
    ["X-Auth-Token: abcdef123456", `X-Auth-Token: ${MASK}`],
    ["x-auth-user: alice@example.com", `x-auth-user: ${MASK}`],
    ["X-Goog-Api-Key: zzz-123456", `X-Goog-Api-Key: ${MASK}`],
    // URL query and fragment values.
    ["GET https://maps.example.com/api?key=abc123def456&page=2", `GET https://maps.example.com/api?key=${MASK}&page=2`],
    ["wss://h.example/v1?access_token=a.b.c&sig=Zx9+/q%3D&v=2", `wss://h.example/v1?access_token=${MASK}&sig=${MASK}&v=2`],
    ["https://b.example/o?X-Amz-Expires=300&X-Amz-Signature=0a1b2c3d&X-Amz-Security-Token=FwoG", `https://b.example/o?X-Amz-Expires=300&X-Amz-Signature=${MASK}&X-Amz-Security-Token=${MASK}`],
    ["https://a.example/cb?code=4/0AX4XfWh&state=xyz", `https://a.example/cb?code=${MASK}&state=xyz`],
    ["https://a.example/cb#access_token=tok123&token_type=bearer", `https://a.example/cb#access_token=${MASK}&token_type=bearer`],
    ["https://a.example/p?api_key=k1&password=p1&secret=s1&signature=s2&token=t1", `https://a.example/p?api_key=${MASK}&password=${MASK}&secret=${MASK}&signature=${MASK}&token=${MASK}`],
    // Name/value pairs in logged JSON, plain and escaped.
    ['[{"name":"api_key","value":"abc123"}]', `[{"name":"api_key","value":"${MASK}"}]`],
    ['{\\"Name\\": \\"X-Api-Key\\", \\"Value\\": \\"abc123\\"}', `{\\"Name\\": \\"X-Api-Key\\", \\"Value\\": \\"${MASK}\\"}`],
    // More key shapes, anywhere in text.
    [`stripe ${STRIPE} / ${STRIPE_TEST}`, `stripe sk_live_…${MASK} / rk_test_…${MASK}`],
    [`npm ${NPM}, gitlab ${GITLAB}, hf ${HUGGING_FACE}`, `npm npm_…${MASK}, gitlab glpat-…${MASK}, hf hf_…${MASK}`],
    [`${GITHUB_OAUTH} and ${SLACK_APP}`, `gho_…${MASK} and xapp-…${MASK}`],
    [`${ANTHROPIC}: rejected`, `sk-ant-…${MASK}: rejected`],
  ])("%s", (text, masked) => {
    expect(maskText(text)).toBe(masked);
    expect(maskText(masked)).toBe(masked);
  });

  it.each([
    // Usage counts insights read, and names that only mention a credential.
    '{"input_token_count":1234,"input_tokens":12,"max_tokens":"4096","total_tokens":"99","cache_read_input_tokens":"5"}',
    "auth.header_name: authorization",
    '{"token_type":"bearer","session_id":"0199a2b3","apiKeySource":"none"}',
    // `key`, `code` and `signature` are credentials only as URL query values.
    "the idempotency key: k-42 was seen before; error code=invalid_api_key",
    '{"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}}',
    "PWD=/home/agent/work npm_config_user_agent=npm/10.8.2 hf_hub_download=ok",
  ])("leaves %s", (text) => {
    expect(maskText(text)).toBe(text);
  });

  it.each([
    ["clientSecret"], ["dbPassword"], ["githubToken"], ["anthropicApiKey"], ["client_secret"], ["GITHUB_TOKEN"], ["APIKey"], ["OAuthToken"],
    ["x-auth-token"], ["X-Auth-User"], ["X-Goog-Api-Key"], ["Ocp-Apim-Subscription-Key"], ["db.password"], ["private_key"], ["passphrase"], ["credentials"], ["x-amz-security-token"], ["accesstoken"],
  ])("%s is a credential name", (name) => expect(isCredentialName(name)).toBe(true));

  it.each([
    ["input_token_count"], ["input_tokens"], ["max_tokens"], ["total_tokens"], ["cache_read_input_tokens"], ["auth.header_name"], ["apiKeySource"], ["tokenUsage"],
    ["token_type"], ["session_id"], ["key"], ["name"], ["code"], ["signature"], ["PWD"], ["auth.env_openai_api_key_present"], ["x-ratelimit-reset-tokens"], ["AWS_ACCESS_KEY_ID"],
  ])("%s is not", (name) => expect(isCredentialName(name)).toBe(false));

  it("masks credential fields, name/value pairs and header pairs in payloads, and keeps the counts", () => {
    const line = {
      config: { clientSecret: "s", dbPassword: "p", githubToken: "t", anthropicApiKey: "k", "auth.header_name": "authorization" },
      params: [{ name: "api_key", value: "v1" }, { key: "Authorization", value: "Bearer abcdefgh12" }, { Name: "X-Auth-Token", Value: "v3" }, { name: "Accept", value: "application/json" }],
      entries: [["Authorization", "Bearer abcdefgh34"], ["X-Api-Key", "v4"], ["Accept", "text/plain"]],
      attributes: [
        { key: "http.request.header.x-api-key", value: { stringValue: "v5" } },
        { key: "auth.header_name", value: { stringValue: "authorization" } },
        { key: "gen_ai.usage.input_tokens", value: { intValue: 12 } },
      ],
      url: "https://a.example/p?key=k9&page=2",
      usage: { input_tokens: 12, max_tokens: 4096, input_token_count: 12, cache_read_input_tokens: 5 },
    };
    expect(maskPayload(line)).toEqual({
      config: { clientSecret: MASK, dbPassword: MASK, githubToken: MASK, anthropicApiKey: MASK, "auth.header_name": "authorization" },
      params: [{ name: "api_key", value: MASK }, { key: "Authorization", value: `Bearer ${MASK}` }, { Name: "X-Auth-Token", Value: MASK }, { name: "Accept", value: "application/json" }],
      entries: [["Authorization", `Bearer ${MASK}`], ["X-Api-Key", MASK], ["Accept", "text/plain"]],
      attributes: [
        { key: "http.request.header.x-api-key", value: { stringValue: MASK } },
        { key: "auth.header_name", value: { stringValue: "authorization" } },
        { key: "gen_ai.usage.input_tokens", value: { intValue: 12 } },
      ],
      url: `https://a.example/p?key=${MASK}&page=2`,
      usage: { input_tokens: 12, max_tokens: 4096, input_token_count: 12, cache_read_input_tokens: 5 },
    });
    const counts = { usage: line.usage, attributes: [line.attributes[2]] };
    expect(maskPayload(counts)).toBe(counts);
  });
});

// Made-up webhook secrets.
const SLACK_HOOK = "https://hooks.slack.com/services/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";
const DISCORD_HOOK = "https://discord.com/api/webhooks/1234567890123456789/Xq9vR2mT7wLp4KzN8bYc1dFg6hJs3aQe5uWo0iEr-2tYx7Z_abcdefghijklmnopqrstu";

describe("whole quoted values, lists, spaced names, escaped query separators and webhooks", () => {
  it.each([
    // A quoted value runs to its own closing quote, escapes included.
    [`password: "don't-tell-anyone" ok`, `password: "${MASK}" ok`],
    [`password='say "hi" 42' ok`, `password='${MASK}' ok`],
    [String.raw`{"password":"ab\"cd\\ef","user":"ana"}`, `{"password":"${MASK}","user":"ana"}`],
    [String.raw`{\"password\":\"ab\\\\cdef\",\"user\":\"ana\"}`, String.raw`{\"password\":\"${MASK}\",\"user\":\"ana\"}`],
    [String.raw`{\"token\":\"ab\\\"cd\",\"user\":\"ana\"}`, String.raw`{\"token\":\"${MASK}\",\"user\":\"ana\"}`],
    [String.raw`[{"name":"api_key","value":"ab\\c'd\"ef"}]`, `[{"name":"api_key","value":"${MASK}"}]`],
    // A list of values.
    ['{"password":["pw-one"],"user":"ana"}', `{"password":["${MASK}"],"user":"ana"}`],
    ['"set-cookie": ["a=1; Path=/", "b=2"], "x": 1', `"set-cookie": ["${MASK}", "${MASK}"], "x": 1`],
    [String.raw`{\"Values\":[\"v1\"],\"Name\":\"x\"} {\"name\":\"api_key\",\"values\":[\"v2\"]}`, String.raw`{\"Values\":[\"v1\"],\"Name\":\"x\"} {\"name\":\"api_key\",\"values\":[\"${MASK}\"]}`],
    // Names of two words.
    ["API key: abc123def456 expired", `API key: ${MASK} expired`],
    ["Your OpenAI API key = abc123def456", `Your OpenAI API key = ${MASK}`],
    ["client secret: s3cr3t-value", `client secret: ${MASK}`],
    // `pwd` as a name's last word, never the working directory alone.
    ["DB_PWD=hunter2 MYSQL_PWD=hunter3 dbPwd: hunter4", `DB_PWD=${MASK} MYSQL_PWD=${MASK} dbPwd: ${MASK}`],
    // HTML- and JSON-escaped query separators.
    ["<a href=\"https://a.example/p?page=2&amp;key=abc123def&amp;v=1\">", `<a href="https://a.example/p?page=2&amp;key=${MASK}&amp;v=1">`],
    [String.raw`"url":"https://a.example/p?page=2\u0026sig=abc123def\u0026v=1"`, String.raw`"url":"https://a.example/p?page=2\u0026sig=${MASK}\u0026v=1"`],
    // After a JSON escape inside a string, a name, a key or a bearer token starts anew.
    [String.raw`"message":"failed:\npassword=hunter2\tkey ${OPENAI}\r\nBearer abcdefgh12"`, String.raw`"message":"failed:\npassword=${MASK}\tkey sk-…${MASK}\r\nBearer ${MASK}"`],
    [`"cmd":"C:\\\\keys\\\\token=abc123 C:\\keys\\${OPENAI}"`, `"cmd":"C:\\\\keys\\\\token=${MASK} C:\\keys\\sk-…${MASK}"`],
    [String.raw`C:\keys\password=hunter2 C:\keys\password=hunter3`, String.raw`C:\keys\password=${MASK} C:\keys\password=${MASK}`],
    // A URL password holding a raw `@`, and a user name holding one: the last `@` of the authority ends it.
    ["proxy https://ana:p@ss@w0rd@proxy.internal:8080/v1?x=a@b refused", `proxy https://ana:${MASK}@proxy.internal:8080/v1?x=a@b refused`],
    ["git https://ana@example.com:hunter2@git.example.com/r.git", `git https://ana@example.com:${MASK}@git.example.com/r.git`],
    // Webhook URLs: the last path segment is the secret.
    [`posting to ${SLACK_HOOK} failed`, `posting to https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/…${MASK} failed`],
    [`{"webhook":"${DISCORD_HOOK}"}`, `{"webhook":"https://discord.com/api/webhooks/1234567890123456789/…${MASK}"}`],
  ])("%s", (text, masked) => {
    expect(maskText(text)).toBe(masked);
    expect(maskText(masked)).toBe(masked);
  });

  it.each([
    "PWD=/home/agent/work OLDPWD=/home/agent cwd: /tmp",
    "cd /tmp PWD=/home/agent/work",
    String.raw`"env":"HOME=/home/agent
PWD=/home/agent/work	OLDPWD=/tmp"`,
    '{"PWD":"/home/agent/work"}',
    "input tokens: 1234, max tokens: 4096, total tokens: 5330",
    "the idempotency key: k-42; the API key header_name: x-api-key", // names that only mention one
    "https://ana@example.com/path:x@y",
    "https://hooks.slack.com/services",
    "proxy https://proxy.internal:8080/v1?x=a@b",
    "&amp;page=2&amp;code_review=on \\u0026limit=5",
    '{"password":{"set":true},"value":{"stringValue":"x"}}',
  ])("leaves %s", (text) => {
    expect(maskText(text)).toBe(text);
  });

  it.each([["DB_PWD"], ["dbPwd"], ["mysql.pwd"], ["API key"], ["client secret"]])("%s is a credential name", (name) => expect(isCredentialName(name)).toBe(true));
  it.each([["PWD"], ["OLDPWD"], ["pwd"], ["input tokens"], ["api key source"]])("%s is not", (name) => expect(isCredentialName(name)).toBe(false));

  it("masks the whole value, in a payload and as its text", () => {
    const line = { env: { DB_PWD: "p1", PWD: "/home/x" }, text: `password: "don't-tell-anyone"`, hook: SLACK_HOOK };
    expect(maskPayload(line)).toEqual({ env: { DB_PWD: MASK, PWD: "/home/x" }, text: `password: "${MASK}"`, hook: `https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/…${MASK}` });
    const text = JSON.stringify(line);
    expect(maskText(text)).toBe(JSON.stringify(maskPayload(line)));
  });
});

describe("maskCredential", () => {
  it.each([
    ["Bearer dummy-oauth-token", `Bearer ${MASK}`],
    [`Bearer ${API_KEY}`, `Bearer rrk_…${MASK}`],
    ["Basic dXNlcjpwYXNz", `Basic ${MASK}`],
    [ANTHROPIC, `sk-ant-…${MASK}`],
    ["dummy-key", MASK],
    ["", MASK],
  ])("%s", (value, masked) => expect(maskCredential(value)).toBe(masked));
});

describe("maskPayload", () => {
  it("masks credential fields and headers in any case, and credentials inside any other string", () => {
    const headers = { "set-cookie": ["sid=1; Path=/", "csrf=2"], Authorization: "Bearer dummy-oauth-token", "X-API-KEY": "dummy-key", "Api-Key": ANTHROPIC, cookie: "a=1", "Set-Cookie": "b=2", "retry-after": "20", "x-ratelimit-reset-requests": "1s" };
    const line = { headers, body: { apiKey: "k", password: "p", accessToken: "t", apiKeySource: "none", attempts: 3 }, list: [`key ${OPENAI}`, 1, null] };
    expect(maskPayload(line)).toEqual({
      headers: { "set-cookie": [MASK, MASK], Authorization: `Bearer ${MASK}`, "X-API-KEY": MASK, "Api-Key": `sk-ant-…${MASK}`, cookie: MASK, "Set-Cookie": MASK, "retry-after": "20", "x-ratelimit-reset-requests": "1s" },
      body: { apiKey: MASK, password: MASK, accessToken: MASK, apiKeySource: "none", attempts: 3 },
      list: [`key sk-…${MASK}`, 1, null],
    });
    expect(line.headers.Authorization).toBe("Bearer dummy-oauth-token"); // the input is never changed
  });

  // Each takes about a millisecond; a rule that backtracked catastrophically would hang here.
  it("scans hostile strings in one pass", () => {
    const hostile = ["token_".repeat(3000), "a:".repeat(8000), `Bearer ${"a".repeat(16_000)}`, `password=${";a=".repeat(5000)}`, `${"x-".repeat(8000)}key`, " sk-".repeat(4000), "://a:".repeat(4000), `https://a:${"b".repeat(16_000)}`, `"token":"${"\\\"".repeat(4000)}`, "a=".repeat(8000), "?key=".repeat(4000), `{"name":"api_key",`.repeat(2000), `${"aB".repeat(8000)}: x`, `${"x-auth-".repeat(3000)}: v`, "sk_live_".repeat(3000), `https://a/?${"token=&".repeat(3000)}`];
    for (const text of hostile) expect(maskText(text).length).toBeGreaterThan(0);
  });

  // Counted, not timed: the text every regex match covers stays within a few times the input,
  // so no value is read again from each of many names before it (`key=key=key=…`).
  it("reads each character a bounded number of times", () => {
    const hostile = ["key=".repeat(4000), "name=".repeat(3200), "Key:".repeat(4000), "name: ".repeat(2700), `"name":"x`.repeat(1800), "a=".repeat(8000), "?key=".repeat(3200), `name:"${'name:\\"'.repeat(2000)}`, `"name":"api_key",${'"name":"api_key",'.repeat(900)}`, "a b: ".repeat(3000), "a b c d ".repeat(2000), "&amp;key=".repeat(1800), "\\u0026key=".repeat(1600), "://a:b@".repeat(2600), `password:[${'"a",'.repeat(3000)}`, "api key ".repeat(2000)];
    const exec = RegExp.prototype.exec;
    let read = 0;
    const spy = vi.spyOn(RegExp.prototype, "exec").mockImplementation(function (this: RegExp, text: string) {
      const match = exec.call(this, text);
      if (match) read += match[0].length;
      return match;
    });
    try {
      for (const text of hostile) {
        read = 0;
        maskText(text);
        expect(read, text.slice(0, 12)).toBeLessThanOrEqual(4 * text.length);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it("returns the very same value when there is nothing to mask", () => {
    const line = { method: "error", params: { threadId: "t1", error: { message: "Reconnecting... 1/5", codexErrorInfo: { httpStatusCode: 429 } } }, at: [1, 2] };
    expect(maskPayload(line)).toBe(line);
  });

  it.each([["authorization"], ["Proxy-Authorization"], ["X-Api-Key"], ["api-key"], ["OPENAI_API_KEY"], ["client_secret"], ["password"], ["refreshToken"]])("%s is a credential name", (name) =>
    expect(isCredentialName(name)).toBe(true),
  );
  it.each([["apiKeySource"], ["retry-after"], ["input_tokens"], ["x-ratelimit-reset-tokens"], ["tokenUsage"], ["auth.header_name"]])("%s is not", (name) =>
    expect(isCredentialName(name)).toBe(false),
  );
});

describe("on the ingest path", () => {
  const secretLine = {
    threadId: "t-secret",
    type: "retry",
    at: NOW - 1000,
    attempt: 1,
    error: {
      httpStatus: 401,
      message: `Incorrect API key provided: ${OPENAI_PROJECT}`,
      headers: { Authorization: `Bearer ${INGEST_TOKEN}`, "Retry-After": "7" },
      details: { request: { headers: { "x-api-key": ANTHROPIC } } },
    },
  };

  it("stores the raw payload and the event masked; the key is derived from the line as received", () => {
    const { lines } = normalizeBatch("canonical", [secretLine], { receivedAt: NOW });
    const text = JSON.stringify(lines[0]);
    for (const secret of [OPENAI_PROJECT, INGEST_TOKEN, ANTHROPIC]) expect(text).not.toContain(secret);
    const error = lines[0].event!.error!;
    expect(error.message).toBe(`Incorrect API key provided: sk-proj-…${MASK}`);
    expect(error.headers).toEqual({ authorization: `Bearer rr_…${MASK}`, "retry-after": "7" });
    expect(lines[0].raw).toMatchObject({ error: { headers: { Authorization: `Bearer rr_…${MASK}`, "Retry-After": "7" } } });
    expect(lines[0].idempotencyKey).toBe(deriveKey(keyMaterial({ format: "canonical", threadId: "t-secret", line: secretLine, at: null }), "canonical", NOW - 1000));
    // Re-sent, the line is the same event (same key), however it was masked.
    expect(normalizeBatch("canonical", [secretLine], { receivedAt: NOW + 5000 }).lines[0].idempotencyKey).toBe(lines[0].idempotencyKey);
  });

  it("masks native lines the same way (codex exec)", () => {
    const line = { type: "error", message: `Reconnecting... 1/5 (unexpected status 401 Unauthorized: Incorrect API key provided: ${OPENAI})` };
    const { lines } = normalizeBatch("codex-exec", [line], { receivedAt: NOW, threadId: "exec-1" });
    expect(lines[0].event).toMatchObject({ type: "retry", attempt: 1, maxAttempts: 5 });
    expect(lines[0].event!.error!.message).toBe(`Reconnecting... 1/5 (unexpected status 401 Unauthorized: Incorrect API key provided: sk-…${MASK})`);
    expect(JSON.stringify(lines[0].raw)).not.toContain(OPENAI);
    expect(lines[0].idempotencyKey).toBe(deriveKey(keyMaterial({ format: "codex-exec", threadId: "exec-1", line, at: NOW }), "codex-exec", NOW));
  });

  it("masks an imported capture the same way (the Sources page and the import script)", () => {
    const capture = [
      { ts_ms: NOW - 2000, src: "stdout", json: { type: "thread.started", thread_id: "imported-1" } },
      { ts_ms: NOW - 1000, src: "stdout", json: { type: "error", message: `Reconnecting... 2/5 (401: Authorization: Bearer ${GITHUB} rejected)` } },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    const parsed = parseCapture(capture);
    const { lines } = normalizeBatch(parsed.format, parsed.items, { receivedAt: NOW });
    expect(lines.map((line) => line.event?.error?.message ?? null)).toEqual([null, `Reconnecting... 2/5 (401: Authorization: Bearer ghp_…${MASK} rejected)`]);
    expect(JSON.stringify(lines).includes(GITHUB)).toBe(false);
  });

  it("masks before a large payload is cut to its preview", () => {
    const filler = "x".repeat(MAX_RAW_CHARS / 8);
    const big = { threadId: "t-big", type: "progress", notes: [filler, `${filler} ${ANTHROPIC}`, ...Array(8).fill(filler)] };
    const { lines } = normalizeBatch("canonical", [big], { receivedAt: NOW });
    const stored = JSON.stringify(lines[0].raw);
    expect(stored.startsWith('{"truncated":true')).toBe(true);
    expect(stored.includes(`sk-ant-…${MASK}`)).toBe(true);
    expect(stored.includes(ANTHROPIC)).toBe(false);
  });

  it.each(captureNames())("finds nothing to mask in what the engine reads from the real capture %s", (name) => {
    const events = normalizeCapture(name).result.lines.map((line) => line.event);
    expect(JSON.stringify(events)).not.toContain(MASK);
  });

  it("an event with nothing to mask is kept as it is", () => {
    const event = { type: "retry" as const, at: NOW, threadId: "t1", error: { httpStatus: 429, message: "Please try again in 20s.", headers: { "retry-after": "20" } } };
    expect(maskEvent(event)).toBe(event);
  });
});
