-- An AGENT token acts for exactly one host, named when it is minted; an ENGINE token may be scoped
-- to one host (its registrations elsewhere are refused). Routers and operators have no host.
ALTER TABLE api_token ADD COLUMN host_id TEXT CHECK (host_id IS NULL OR length(host_id) BETWEEN 1 AND 253);

-- Agent tokens minted before host binding are bound to the one host they registered, or else to
-- their subject (which is how incarnations of "their host" were found until now).
UPDATE api_token t
SET host_id = COALESCE(
        (SELECT min(a.host_id) FROM node_agent a WHERE a.owner_subject = t.subject HAVING count(*) = 1),
        t.subject)
WHERE t.role = 'AGENT';

ALTER TABLE api_token ADD CONSTRAINT api_token_agent_bound CHECK (role <> 'AGENT' OR host_id IS NOT NULL);
ALTER TABLE api_token ADD CONSTRAINT api_token_host_roles CHECK (host_id IS NULL OR role IN ('AGENT', 'ENGINE'));
