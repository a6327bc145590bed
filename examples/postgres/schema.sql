-- The users of the service, in PostgreSQL (docs/beyond-one-process.md). applySchema, in store.go,
-- runs this file at start on a database without the table, and on a table of the version before
-- this one once it has added name_key; on a table that is up to date it runs nothing.

-- pg_trgm's trigram indexes let LIKE '%text%' find a part of a name or an e-mail without reading
-- every row (PostgreSQL docs, "pg_trgm"). It is a trusted extension: the database's owner may
-- create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE IF NOT EXISTS users (
    -- From the identity's sequence: ids increase and are never given twice, not after a delete, not
    -- after a restart. A create that fails after taking its id (an e-mail taken) leaves a gap.
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL,
    -- The name and the e-mail as the service sorts, searches and compares them: lower-cased by the
    -- service itself (nameKey in store.go, uniqueKey in user.go), never by lower(), whose mapping
    -- follows the database's locale. COLLATE "C" compares them byte by byte, as Go compares
    -- strings, whatever the database's own collation.
    name_key text COLLATE "C" NOT NULL,
    email_key text COLLATE "C" NOT NULL UNIQUE
);

-- The list's indexes. The primary key serves sort=id; email_key's unique index serves email= and
-- sort=email; this one serves sort=name, ties in id order.
CREATE INDEX IF NOT EXISTS users_name_key ON users (name_key, id);
-- These serve q=, a part of the name or of the e-mail, as LIKE '%text%'.
CREATE INDEX IF NOT EXISTS users_name_key_trigrams ON users USING gin (name_key gin_trgm_ops);
CREATE INDEX IF NOT EXISTS users_email_key_trigrams ON users USING gin (email_key gin_trgm_ops);
