"use client";

import { stopMatching } from "@/lib/actions/stop-matching";
import { StopMany } from "@/components/threads/stop-many";

/** "Stop all N matching": every active thread of the board's current filter. */
export function StopAllMatching({ queryString, count }: { queryString: string; count: number }) {
  return (
    <StopMany
      count={count}
      testId="stop-all"
      label={`Stop all ${count} matching`}
      description="Every active thread matching the current filter gets an interrupt directive."
      run={(reason) => stopMatching({ query: queryString, expected: count, reason })}
    />
  );
}

