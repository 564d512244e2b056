/** Shared by the Playwright config and the browser specs: the test server's first-source token. */
export const E2E_TOKEN = "rr_e2e_token_for_tests";

/** The admin the Playwright server creates at start (RADAR_ADMIN_EMAIL / RADAR_ADMIN_PASSWORD); specs sign in as them. */
export const E2E_ADMIN = { email: "admin@e2e.test", password: "e2e-admin-password" };

/** Where the signed-in admin's browser state is kept between the setup project and the specs. */
export const ADMIN_STATE = "test-results/.auth/admin.json";
