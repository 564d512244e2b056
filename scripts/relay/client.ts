import crypto from "node:crypto";
import type { DirectiveView, IngestResponse } from "../../lib/wire/types";

/** The radar server's ingestion and directive API, as the relay uses it. */
export type Directive = DirectiveView;
export type { IngestResponse };

export type PostOutcome =
  | { ok: true; status: number; body: IngestResponse }
  /** Retrying the same request later may work (network, 408/425/429, 5xx, 404 of a half-started server, 401). */
  | { ok: false; retryable: true; status: number | null; retryAfter: string | null; message: string }
  /** The server will never accept this body as it is (400, 413, 422 without a body …). */
  | { ok: false; retryable: false; status: number; message: string };

export class RadarClient {
  readonly server: string;
  constructor(
    server: string,
    private readonly token: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.server = server.replace(/\/+$/, "");
  }

  /**
   * Names what this client delivers to (server and source) without revealing the token: a spool
   * journal carries it, so lines are only ever resumed towards the radar and source they were for.
   */
  get destination(): string {
    return crypto.createHash("sha256").update(`${this.server}\0${this.token}`).digest("hex").slice(0, 12);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...extra };
  }

  async postLines(pathname: string, lines: string[], query: Record<string, string | null> = {}, timeoutMs = 30_000): Promise<PostOutcome> {
    const url = new URL(this.server + pathname);
    for (const [k, v] of Object.entries(query)) if (v) url.searchParams.set(k, v);
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: "POST",
        headers: this.headers({ "content-type": "application/x-ndjson" }),
        body: lines.join("\n") + "\n",
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      return { ok: false, retryable: true, status: null, retryAfter: null, message: networkMessage(error) };
    }
    const text = await response.text().catch(() => "");
    const retryAfter = response.headers.get("retry-after");
    if (response.ok || response.status === 422) {
      try {
        const body = JSON.parse(text) as IngestResponse;
        return {
          ok: true,
          status: response.status,
          body: {
            accepted: Number(body.accepted ?? 0),
            duplicates: Number(body.duplicates ?? 0),
            ignored: Number(body.ignored ?? 0),
            rejected: Array.isArray(body.rejected) ? body.rejected : [],
            rejectedOmitted: Number(body.rejectedOmitted ?? 0),
            directives: Array.isArray(body.directives) ? body.directives : [],
          },
        };
      } catch {
        return { ok: false, retryable: true, status: response.status, retryAfter, message: `unexpected response body: ${text.slice(0, 200)}` };
      }
    }
    const detail = problemDetail(text);
    if (response.status === 400 || response.status === 413 || response.status === 422) {
      return { ok: false, retryable: false, status: response.status, message: `${response.status} ${detail}` };
    }
    const hint = response.status === 401 ? " (check the token given with --token-file / --token-stdin)" : response.status === 404 ? " (is --server / RADAR_URL a Retry Radar server?)" : "";
    return { ok: false, retryable: true, status: response.status, retryAfter, message: `${response.status} ${detail}${hint}` };
  }

  /**
   * Long-polls the source's pending directives, announcing what this relay can carry out (`can`),
   * so the radar offers only those controls. Throws on failure (the caller backs off).
   */
  async pollDirectives(waitSeconds: number, signal?: AbortSignal, can?: readonly string[]): Promise<Directive[]> {
    const announce = can === undefined ? "" : `&can=${encodeURIComponent(can.join(","))}`;
    const url = `${this.server}/api/v1/directives?wait=${Math.max(0, Math.min(30, Math.round(waitSeconds)))}${announce}`;
    const timeout = AbortSignal.timeout((waitSeconds + 15) * 1000);
    const response = await this.fetchImpl(url, {
      headers: this.headers(),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await response.text();
    if (!response.ok) {
      const error = new HttpError(response.status, `${response.status} ${problemDetail(text)}`, response.headers.get("retry-after"));
      throw error;
    }
    const body = JSON.parse(text) as { directives?: Directive[] };
    return Array.isArray(body.directives) ? body.directives : [];
  }

  /** Acknowledges a directive. 2xx → done; 404/409 → done (nothing more to say), with a note. */
  async ack(id: string, result: "acknowledged" | "failed", detail: string | null): Promise<{ done: boolean; status: number | null; message: string }> {
    try {
      const response = await this.fetchImpl(`${this.server}/api/v1/directives/${encodeURIComponent(id)}/ack`, {
        method: "POST",
        headers: this.headers({ "content-type": "application/json" }),
        body: JSON.stringify({ result, detail: detail?.slice(0, 2000) ?? null }),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await response.text().catch(() => "");
      if (response.ok) return { done: true, status: response.status, message: "ok" };
      if (response.status === 404 || response.status === 409 || response.status === 400) {
        return { done: true, status: response.status, message: `${response.status} ${problemDetail(text)}` };
      }
      return { done: false, status: response.status, message: `${response.status} ${problemDetail(text)}` };
    } catch (error) {
      return { done: false, status: null, message: networkMessage(error) };
    }
  }
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter: string | null = null,
  ) {
    super(message);
  }
}

function problemDetail(text: string): string {
  try {
    const body = JSON.parse(text);
    return [body.title, body.detail].filter(Boolean).join(": ") || text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

export function networkMessage(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError") return "request timed out";
  if (e?.name === "AbortError") return "request aborted";
  if (e?.cause?.code) return e.cause.message?.includes(e.cause.code) ? e.cause.message : e.cause.code;
  return e?.cause?.message ?? e?.message ?? String(error);
}
