-- Recall asks which of its candidates are in an open conflict, on either side: conflicts_items (item_a, item_b)
-- serves item_a only, so a match on item_b read the whole conflicts table (a tenant that loaded a long chat
-- history holds thousands of duplicate conflicts).
CREATE INDEX conflicts_item_b ON conflicts (item_b);
