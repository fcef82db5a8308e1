/** What `npm run admin -- --help` prints, and a wrong command line after its error. */
export const USAGE = `Operator commands (npm run admin -- <command>):
  tenant create --name <name> [--json]   new tenant; prints its id, integration token and signing secret ONCE
                                         (in development it gets a sandbox provider account at once)
  tenant list [--json]                   tenants with their number of active tokens
  tenant disable <tenant_id>             refuse every token of a tenant from now on
  tenant account --tenant <tenant_id> [--json]   the tenant's provider account (credentials only as set/none)
  tenant account --tenant <tenant_id> --provider sandbox|inter|pix --beneficiary-name <name>
      --beneficiary-tax-id <cnpj or cpf> [--beneficiary-city <city>] [--pix-key <key>] [--agency <n>]
      [--account <n>] [--json]
      inter also: --client-id <id> --client-secret-file <file> --cert-file <file> --key-file <file>
      [--base-url <url>] [--replace-webhook]
                                         (without --pix-key an inter account issues slips only: PIX
                                         charges get 422 pix_key_required)
      pix (any bank's PIX API on the Central Bank's standard; PIX charges only):
      --pix-api-url <url> --token-url <url> --client-id <id> --client-secret-file <file>
      --cert-file <file> --key-file <file> --pix-key <key> [--replace-webhook]
                                         (https URLs in production; http too in development)
                                         (--replace-webhook: point the bank's webhook at us even when it
                                         is set to another URL; without it that URL is kept)
                                         sets it, for charges accepted from now on; secrets come only
                                         from files (- reads one of them from stdin)
  tenant rotate-secret --tenant <tenant_id> [--overlap-hours 24] [--json]
                                         a new signing secret, printed ONCE; until previous_valid_until
                                         callbacks carry the old signature too (hours may be fractional,
                                         0 ends the old secret at once)
  token create --tenant <tenant_id> [--json]   issue another integration token
  token list --tenant <tenant_id> [--json]
  token revoke <token_id>                JWTs issued from it stop working at once
  token revoke -                         the same, reading the token (or its id) from stdin
  secrets reencrypt [--json]             seal again with CREDENTIALS_ENCRYPTION_KEY every secret sealed with
                                         an older key (after a key rotation)
  audit [--tenant <tenant_id>] [--limit <n>] [--json]   who changed what, and when (oldest first)
  jobs dead [--limit <n>] [--json]       dead letters: jobs whose handler failed JOB_MAX_FAILURES times, or
                                         poison (id, stream, message id, last error, failures, when)
  jobs redrive <id>                      publish dead letter <id> again to its stream, and remove it
  jobs discard <id>                      remove dead letter <id> without publishing it (audited)
  operator create --name <name> [--json] an operator of the admin API (ADMIN_PORT); prints its credential ONCE
  operator list [--json]                 operators (credential hints only)
  operator revoke <operator_id>          its credential is refused from now on
  operator invite --email <e-mail> [--json]   a person's one-time console invitation; prints its link token ONCE
  bus provision [--json]                 create or raise every stream, durable consumer, the dead letters and
                                         every claim store of BUS_PREFIX, with STREAM_MAX_BYTES and
                                         STREAM_REPLICAS; never lowers them (a larger value is kept and said);
                                         prints what it created, raised, updated or left. Services only check
                                         these at start: npm start and the deploys run this first. Needs no
                                         database; logs in as the provisioning user (NATS_USER=admin)
Every change is audited under --operator <name> or ADMIN_OPERATOR (required in production).
Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/receivables);
  jobs: NATS_URL, BUS_PREFIX and the bus login (NATS_USER=admin-cli and NATS_PASSWORD, or NATS_CREDS);
  bus provision: NATS_URL, BUS_PREFIX, NATS_USER=admin and NATS_PASSWORD (or NATS_CREDS), NATS_TLS_*_FILE,
  STREAM_MAX_BYTES, STREAM_REPLICAS;
  CREDENTIALS_ENCRYPTION_KEY (32 bytes, base64) seals signing secrets and bank credentials: required in
  production; CREDENTIALS_PREVIOUS_KEYS: older keys, comma-separated, that still open what they sealed`;
