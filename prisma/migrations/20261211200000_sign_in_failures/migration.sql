-- Sign-in throttling that forgets (lib/auth/lockout.ts): each failed sign-in is one row, counted
-- per account, per client address and per both within a sliding window, and removed once older
-- than it. The counts "in a row" of "SignInGuard" never decayed, so they go: a lockout running
-- when this applies is lifted.
CREATE TABLE "SignInFailure" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "at" DATETIME NOT NULL,
    "email" TEXT NOT NULL,
    "address" TEXT NOT NULL
);
CREATE INDEX "SignInFailure_at_idx" ON "SignInFailure"("at");
CREATE INDEX "SignInFailure_email_at_idx" ON "SignInFailure"("email", "at");
CREATE INDEX "SignInFailure_address_at_idx" ON "SignInFailure"("address", "at");

DROP TABLE "SignInGuard";
