/** The client's address as the server saw it (Next sets x-forwarded-for from the socket when a proxy did not). */
export function clientAddress(request: Request | Headers): string | null {
  const headers = request instanceof Headers ? request : request.headers;
  const first = headers.get("x-forwarded-for")?.split(",")[0]?.trim();
  return first ? first.slice(0, 100) : null;
}
