import { describe, expect, it } from "vitest";
import { roleForClaims } from "./sso";

const mapping = { roleClaim: "groups", adminValues: ["radar-admins"], operatorValues: ["oncall", "sre"] };

describe("the SSO claim → role mapping", () => {
  it.each([
    [{ groups: ["radar-admins", "oncall"] }, "admin"],
    [{ groups: ["sre"] }, "operator"],
    [{ groups: "oncall other" }, "operator"],
    [{ groups: ["marketing"] }, "viewer"],
    [{}, "viewer"],
    [{ groups: 42 }, "viewer"],
  ] as const)("%j → %s", (claims, role) => {
    expect(roleForClaims(claims as Record<string, unknown>, mapping)).toBe(role);
  });
});
