"use client";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { z } from "zod";
import { LiveUpdatesProvider } from "@/components/live/live-updates";
import { ServerClockProvider } from "@/components/time/server-clock";
import { TimeZoneProvider } from "@/components/time/time-zone";

// zod compiles object parsers with `new Function` after probing whether eval is allowed; the
// pages' CSP forbids eval, and the probe itself is reported as a violation. Parse without it.
z.config({ jitless: true });

export function Providers({ children }: { children: ReactNode }) {
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 2_000, retry: 1 } } }));
  return (
    <QueryClientProvider client={client}>
      <ServerClockProvider>
        <TimeZoneProvider>
          <LiveUpdatesProvider>{children}</LiveUpdatesProvider>
        </TimeZoneProvider>
      </ServerClockProvider>
    </QueryClientProvider>
  );
}
