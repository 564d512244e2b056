"use server";

import { z } from "zod";
import { sendTest } from "@/lib/server/alerts-admin";
import { formAction } from "./safe-action";

/** "Send test": a test alert through the outbox, delivered and shown like any other. */
export const sendTestAlert = formAction(
  { name: "alert.test", access: "admin", input: z.object({ destinationId: z.string().min(1).max(100) }), revalidate: "/alerts" },
  async ({ destinationId }, { now }) => sendTest(destinationId, now),
  ({ destinationId }, outcome) => ({ target: outcome.ok ? outcome.destination : destinationId, result: outcome.ok ? "queued" : "not-found", detail: outcome.ok ? `alert #${outcome.outboxId}` : null }),
);
