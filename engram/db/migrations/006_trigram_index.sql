-- Trigram index for possible_supersedes: same-kind live items whose text is similar to a new memory.
CREATE INDEX memory_items_trgm ON memory_items USING gin (content gin_trgm_ops);
