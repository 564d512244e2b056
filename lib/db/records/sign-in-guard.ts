/** Failed sign-ins of one email from one address within a window: the rule's own shape, on either store (times in epoch ms). */
export type { FailureGroup } from "@/lib/auth/lockout";

/** Whose failures to forget: an email's, an address's, or both together (an email from one address). */
export type Forget = { email: string; address?: string } | { email?: string; address: string };

/** The WHERE clause of a Forget, in either store's placeholders (`?`, or `$n` from `placeholder`). */
export function forgetWhere(of: Forget, placeholder: (n: number) => string = () => "?"): { where: string; params: string[] } {
  const parts: string[] = [];
  const params: string[] = [];
  if (of.email !== undefined) parts.push(`email = ${placeholder(params.push(of.email))}`);
  if (of.address !== undefined) parts.push(`address = ${placeholder(params.push(of.address))}`);
  return { where: parts.join(" AND "), params };
}
