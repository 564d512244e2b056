/** The path of a Chromium to launch, installed with apt when missing; null: Playwright's own. */
export function ensureChromium(): string | null;
