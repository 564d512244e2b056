import { describe, expect, it } from "vitest";
import { lesserRole, roleAllows, roleOf, ROLES } from "./roles";

describe("roles", () => {
  it.each([
    ["viewer", "viewer", true],
    ["viewer", "operator", false],
    ["viewer", "admin", false],
    ["operator", "viewer", true],
    ["operator", "operator", true],
    ["operator", "admin", false],
    ["admin", "viewer", true],
    ["admin", "operator", true],
    ["admin", "admin", true],
  ] as const)("a %s may do what a %s may: %s", (role, needed, allowed) => {
    expect(roleAllows(role, needed)).toBe(allowed);
  });
  it("an API key is capped by its owner's role", () => {
    expect(lesserRole("admin", "operator")).toBe("operator");
    expect(lesserRole("viewer", "admin")).toBe("viewer");
  });
  it("an unknown stored role counts as the least", () => {
    expect(roleOf("root")).toBe("viewer");
    expect(roleOf(null)).toBe("viewer");
    expect(ROLES).toEqual(["viewer", "operator", "admin"]);
  });
});
