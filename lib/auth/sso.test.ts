import { describe, expect, it } from "vitest";
import { roleForClaims, ssoFailureMessage } from "./sso";

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

describe("what /sign-in says when single sign-on came back with an error", () => {
  it.each([
    [undefined, null],
    ["account_not_linked", /only when the provider has verified the email/],
    ["state_mismatch", /did not complete/],
  ] as const)("%s", (error, message) => {
    const said = ssoFailureMessage(error);
    if (message === null) expect(said).toBeNull();
    else expect(said).toMatch(message);
  });
});
