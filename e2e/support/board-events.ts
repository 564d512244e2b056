import { expect, type APIRequestContext, type Page } from "@playwright/test";
import { E2E_TOKEN } from "./e2e-env";

/** What the browser specs share: posting events as the test server's source, and finding a board row. */

/** The first source's ingest token, as the Authorization header. */
export const ingestAuth = { authorization: `Bearer ${E2E_TOKEN}` };

let run = 0;
/** A thread id no other spec or run uses. */
export const uid = (name: string) => `${name}-${Date.now().toString(36)}-${run++}`;

/** Posts canonical events through the real ingestion API; every one must be accepted. */
export async function sendEvents(request: APIRequestContext, events: object[]) {
  const response = await request.post("/api/v1/events", { headers: ingestAuth, data: events });
  expect(response.status(), await response.text()).toBe(200);
  const body = await response.json();
  expect(body.rejected).toEqual([]);
  return body;
}

/** The board's row of a thread. */
export const threadRow = (page: Page, threadId: string) => page.locator(`[data-testid="thread-row"][data-thread-id="${threadId}"]`);
