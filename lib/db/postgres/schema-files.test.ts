import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

/**
 * The two Prisma schemas differ only in their header (generator output, datasource provider):
 * the models below it are the same text, so both generated clients have the same types.
 */
it("prisma/postgres/schema.prisma declares exactly the models of prisma/schema.prisma", () => {
  const root = path.resolve(import.meta.dirname, "..", "..", "..");
  const models = (file: string) => {
    const text = fs.readFileSync(path.join(root, file), "utf8");
    return text.slice(text.search(/^(\/\/\/.*\n)*model /m));
  };
  const sqlite = models("prisma/schema.prisma");
  expect(sqlite.length).toBeGreaterThan(1000);
  expect(models("prisma/postgres/schema.prisma")).toBe(sqlite);
});
