import { describe, expect, it } from "vitest";
import { csvCell, csvLine } from "./csv";

describe("CSV cells", () => {
  it.each([
    ["plain text", "hello", "hello"],
    ["null", null, ""],
    ["undefined", undefined, ""],
    ["integer", 42, "42"],
    ["negative number stays a number", -1770, "-1770"],
    ["NaN is empty", Number.NaN, ""],
    ["boolean", true, "true"],
    ["comma is quoted", "a,b", '"a,b"'],
    ["quote is doubled", 'say "hi"', '"say ""hi"""'],
    ["newline is quoted", "line1\nline2", '"line1\nline2"'],
    ["object as JSON", { a: 1 }, '"{""a"":1}"'],
  ])("%s", (_name, value, expected) => expect(csvCell(value)).toBe(expected));
});

describe("formula injection is neutralised", () => {
  it.each([
    ["=", "=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""],
    ["+", "+1+1", "'+1+1"],
    ["-", "-2+3", "'-2+3"],
    ["@", "@SUM(A1)", "'@SUM(A1)"],
    ["tab", "\t=1", "'\t=1"],
    ["carriage return", "\r=1", "\"'\r=1\""],
    ["line feed", "\n=1+1", "\"'\n=1+1\""],
    ["line feed before @", "\n@SUM(A1)", "\"'\n@SUM(A1)\""],
    ["CRLF", "\r\n-1", "\"'\r\n-1\""],
    ["tab alone", "\t", "'\t"],
    ["= with a comma", "=1,2", "\"'=1,2\""],
  ])("a cell starting with %s gets an apostrophe", (_start, value, expected) => expect(csvCell(value)).toBe(expected));

  it.each([["a=b"], ["1+1"], ["mail@example.com"], ["'already"]])("%s is left alone", (value) => expect(csvCell(value)).toBe(value));
});

describe("CSV lines", () => {
  it("joins cells with commas and ends with CRLF", () => {
    expect(csvLine(["a", 1, null, "=x"])).toBe("a,1,,'=x\r\n");
  });
});
