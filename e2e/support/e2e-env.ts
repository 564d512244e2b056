/** Shared by the Playwright config and the browser specs: the test server's first-source token. */
export const E2E_TOKEN = "rr_e2e_token_for_tests";
