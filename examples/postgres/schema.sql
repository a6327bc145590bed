-- The users of the service, in PostgreSQL (docs/beyond-one-process.md). openUserStore applies this
-- file at every start: it creates what is absent, and changes nothing that is there.
CREATE TABLE IF NOT EXISTS users (
    -- From the identity's sequence: ids increase and are never given twice, not after a delete, not
    -- after a restart. A create that fails after taking its id (an e-mail taken) leaves a gap.
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL,
    -- The e-mail as the service compares it: lower-cased by the service itself (uniqueKey,
    -- user.go), never by lower(), whose mapping follows the database's locale.
    email_key text NOT NULL UNIQUE
);
