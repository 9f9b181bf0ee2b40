-- Index-time context: the full-text index covers, beside the content, the date the claim holds from (as the
-- words people search with) and the subject. Ingest writes index_context; this fills it in for the rows
-- already there, then rebuilds the generated column and its index over both.
ALTER TABLE memory_items ADD COLUMN index_context text NOT NULL DEFAULT '';

UPDATE memory_items SET index_context = trim(both ' ' FROM
    coalesce(to_char(valid_from AT TIME ZONE 'UTC', 'FMDD FMMonth YYYY') || ' ('
             || to_char(valid_from AT TIME ZONE 'UTC', 'FMDay') || ')', '')
    || ' ' || trim(both ' ' FROM regexp_replace(coalesce(subject, ''), '[._:/-]+', ' ', 'g')))
WHERE valid_from IS NOT NULL OR subject IS NOT NULL;

DROP INDEX memory_items_tsv;
ALTER TABLE memory_items DROP COLUMN content_tsv;
ALTER TABLE memory_items ADD COLUMN content_tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english', content || ' ' || index_context)) STORED;
CREATE INDEX memory_items_tsv ON memory_items USING gin (content_tsv);
