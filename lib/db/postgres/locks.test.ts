import { expect, it } from "vitest";
import { DATABASE_LOCKS } from "./locks";

it("every whole-database lock has a number of its own (a shared one makes two roles wait on each other)", () => {
  const numbers = Object.values(DATABASE_LOCKS);
  expect(new Set(numbers).size).toBe(numbers.length);
});
