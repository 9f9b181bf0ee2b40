-- The platform administrator is an explicit flag on a principal, no longer any principal of type `admin`: a
-- platform administrator creating an `admin` principal for a tenant made a second platform administrator
-- without meaning to. Only this migration sets it (for the development admin, whose key `engram up` and
-- `engram bootstrap-key` issue); no API writes it.
ALTER TABLE principals ADD COLUMN platform_admin boolean NOT NULL DEFAULT false;
UPDATE principals SET platform_admin = true WHERE id = '00000000-0000-4000-8000-000000000004';
