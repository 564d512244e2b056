/** A sign-in guard's count of failures in a row and the lockout they caused (epoch ms), on either store. */
export interface GuardState {
  failures: number;
  lockedUntil: number | null;
}
