-- Shared codes in their normal form (docs/shared-codes.md): upper case
-- (already so since 0006), dashes and spaces dropped, as a typed code is
-- read. "SUMMER-8931" becomes "SUMMER8931", so the unique index of 0006 on
-- shared_code_live (recomputed by this UPDATE) now refuses two live
-- templates whose codes differ only by dashes, and a checkout finds the code
-- however it is typed.
--
-- Two live templates whose codes fold to one form cannot both keep it.
-- couponsvc does not choose between them (the code on a poster would start
-- granting another template's discount): before this file runs, Migrate
-- checks for such pairs and stops, naming them, with nothing changed and the
-- version not marked dirty (services/migrate_shared_codes.go). The operator
-- archives one of the pair or changes its code, and starts again. Should
-- such a pair appear between that check and this UPDATE (an old instance
-- still serving), the UPDATE fails whole on the unique index (one InnoDB
-- statement) and only the version is marked dirty: see docs/migrations.md.

UPDATE templates SET shared_code = REPLACE(REPLACE(shared_code, '-', ''), ' ', '')
  WHERE shared_code LIKE '%-%' OR shared_code LIKE '% %';
