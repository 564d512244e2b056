"use client";

import { createContext, useContext, type ReactNode } from "react";
import { roleAllows, type Role } from "@/lib/auth/roles";

/** Who is signed in, for showing only the controls their role may use (the server checks again). */
export interface SignedIn {
  role: Role;
  displayName: string;
}

const SignedInContext = createContext<SignedIn | null>(null);

export function SignedInProvider({ value, children }: { value: SignedIn | null; children: ReactNode }) {
  return <SignedInContext.Provider value={value}>{children}</SignedInContext.Provider>;
}

/** Whether the signed-in person's role includes `role`. */
export function useCan(role: Role): boolean {
  const signedIn = useContext(SignedInContext);
  return signedIn !== null && roleAllows(signedIn.role, role);
}

export function useSignedIn(): SignedIn | null {
  return useContext(SignedInContext);
}
