import type { TroubleKind } from "@/lib/retry/types";
import { kindLabel } from "@/lib/ui/format";

/**
 * Fixed colours per meaning, so a kind or an outcome reads the same on every chart and every
 * visit; provider/model splits take the palette in order. Colours pass 3:1 against white.
 */
const KIND_COLORS: Record<string, string> = {
  rate_limit: "#d97706",
  capacity: "#7c3aed",
  usage_limit: "#0284c7",
  transport: "#475569",
  auth: "#be123c",
  invalid_request: "#db2777",
  other: "#78716c",
} satisfies Record<TroubleKind, string>;

const OUTCOME_COLORS: Record<string, string> = {
  recovered: "#16a34a",
  completed: "#0d9488",
  exhausted: "#dc2626",
  failed: "#9f1239",
  stopped: "#475569",
  interrupted: "#9333ea",
  superseded: "#94a3b8",
};

const PALETTE = ["#2563eb", "#d97706", "#059669", "#7c3aed", "#dc2626", "#0891b2", "#65a30d", "#db2777"];
const OTHERS = "#94a3b8";

export const GAP_COLORS = { advised: "#94a3b8", onTime: "#0284c7", early: "#dc2626" };

export function seriesColor(split: "kind" | "provider" | "model" | "outcome", series: string, index: number): string {
  if (split === "kind") return KIND_COLORS[series] ?? OTHERS;
  if (split === "outcome") return OUTCOME_COLORS[series] ?? OTHERS;
  return series === "(others)" ? OTHERS : PALETTE[index % PALETTE.length];
}

export function seriesLabel(split: "kind" | "provider" | "model" | "outcome", series: string): string {
  return split === "kind" ? kindLabel(series) : series;
}
