-- Shared codes in their normal form (see the MySQL file of the same version
-- for why, and for what happens when two live templates' codes fold to one
-- form: Migrate stops before this file, naming them). The partial unique
-- index of 0006 on shared_code then refuses codes that differ only by
-- dashes; a refusal here rolls the whole run back.

UPDATE templates SET shared_code = REPLACE(REPLACE(shared_code, '-', ''), ' ', '')
  WHERE shared_code LIKE '%-%' OR shared_code LIKE '% %';
