-- A browser that signed in as a person recently carries a signed "known device" cookie
-- (lib/auth/known-device.ts); its failures are counted per account and device, so others'
-- failures elsewhere cannot hold that browser back.
ALTER TABLE "SignInFailure" ADD COLUMN "device" TEXT;
