import { afterEach, describe, expect, it, vi } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { config } from "@/lib/config";
import { countPeople } from "@/lib/db/people";
import { listSourceOverviews } from "@/lib/db/sources";
import { seedStore } from "./boot";

/**
 * Instances that start together on one database seed it once: one prints the token and the setup
 * link, the others find them and start. (Two seeds at once in one process stand for two instances:
 * each turn is a connection of its own.)
 */
describe.each(STORES)("the first start's seeding on %s", (store) => {
  useStore(store);
  afterEach(() => vi.restoreAllMocks());

  it("eight starts at the same moment create one source, one token and one setup link, and none fails", async () => {
    const printed: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (printed.push(String(chunk)), true));
    const settings = { ...config(), RADAR_INGEST_TOKEN: "rr_seed_token_for_this_test", RADAR_ADMIN_EMAIL: undefined, RADAR_ADMIN_PASSWORD: undefined };
    await Promise.all(Array.from({ length: 8 }, () => seedStore(settings)));
    vi.restoreAllMocks();

    const sources = await listSourceOverviews();
    expect(sources.map((s) => s.name)).toEqual(["default"]);
    expect(printed.join("").match(/Ingest token: rr_seed_token_for_this_test/g)).toHaveLength(1);
    expect(printed.join("").match(/\/setup\?code=/g)).toHaveLength(1);
    expect(await countPeople()).toBe(0);
  });
});
