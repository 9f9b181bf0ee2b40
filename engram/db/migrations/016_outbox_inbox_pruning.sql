-- Housekeeping: the ingest sweep deletes outbox rows published more than ENGRAM_OUTBOX_RETENTION_HOURS ago and
-- consumer inbox rows older than ENGRAM_INBOX_RETENTION_DAYS, a bounded batch per pass, across tenants (system
-- scope, as the relay). The indexes let each pass find its oldest rows without a scan.

CREATE INDEX outbox_sent ON outbox (sent_at) WHERE sent_at IS NOT NULL;
CREATE INDEX consumer_inbox_processed ON consumer_inbox (processed_at);

-- only published rows: an unsent one is an event not yet announced
CREATE POLICY sweep_prunes_sent ON outbox FOR DELETE USING (engram_system_scope() AND sent_at IS NOT NULL);

-- the sweep reads, locks (FOR UPDATE SKIP LOCKED: UPDATE's USING applies, no row may change) and deletes
CREATE POLICY sweep_reads_inbox ON consumer_inbox FOR SELECT USING (engram_system_scope());
CREATE POLICY sweep_locks_inbox ON consumer_inbox FOR UPDATE USING (engram_system_scope()) WITH CHECK (false);
CREATE POLICY sweep_prunes_inbox ON consumer_inbox FOR DELETE USING (engram_system_scope());
