import { sql, type Kysely, type Migration } from 'kysely';

export const admitRequests: Migration = {
  // The door of every API request in one round trip: see http/admission.ts.
  async up(db: Kysely<unknown>) {
    await sql`${sql.raw(ADMIT_REQUESTS)}`.execute(db);
  },
};

/**
 * admit_requests: for many requests at once, in the caller's statement (one round trip, one commit),
 * takes each request's charges from its tenant's token bucket in the order given (buckets created
 * when missing and locked in key order, so two gateways cannot deadlock; a request finding too few
 * tokens takes none), then claims the Idempotency-Key of each request the limit let through (new keys
 * inserted, expired ones taken over, in key order; a key named twice is claimed for its first request).
 * One row per request, in order: whether the limit let it through (and if not, in how many ms it could),
 * whether its key was claimed, and otherwise the key's record as it stands.
 */
const ADMIT_REQUESTS = `
create function admit_requests(
  p_bucket text[], p_cost float8[], p_burst float8, p_per_second float8,
  p_tenant uuid[], p_key text[], p_method text[], p_path text[], p_fingerprint text[],
  p_now timestamptz, p_expires timestamptz)
returns table (taken boolean, retry_after_ms float8, claimed boolean, fingerprint text, locked_at timestamptz,
  status_code int, response_body text, response_headers jsonb)
language plpgsql as $fn$
declare
  n int := coalesce(array_length(p_tenant, 1), 0);
  held jsonb := '{}';
  ok boolean[] := array_fill(true, array[n]);
  wait float8[] := array_fill(null::float8, array[n]);
  tokens float8;
  bucket record;
begin
  for bucket in
    insert into rate_limit_buckets as b (key, tokens, updated_at)
      select k, p_burst, now() from unnest(p_bucket) as k where k is not null group by k order by k
    on conflict (key) do update set tokens = b.tokens
    returning b.key, least(p_burst, b.tokens + extract(epoch from (now() - b.updated_at)) * p_per_second) as left
  loop
    held := held || jsonb_build_object(bucket.key, bucket.left);
  end loop;
  for i in 1..n loop
    continue when p_bucket[i] is null;
    tokens := (held ->> p_bucket[i])::float8;
    if p_cost[i] > p_burst then
      ok[i] := false;
      wait[i] := 'Infinity';
    elsif tokens >= p_cost[i] then
      held := jsonb_set(held, array[p_bucket[i]], to_jsonb(tokens - p_cost[i]));
    else
      ok[i] := false;
      wait[i] := greatest(1, ceil((p_cost[i] - tokens) / p_per_second * 1000));
    end if;
  end loop;
  update rate_limit_buckets as b set tokens = v.value::float8, updated_at = now()
    from jsonb_each_text(held) as v where b.key = v.key;
  return query
  with req as (
    select u.* from unnest(p_tenant, p_key, p_method, p_path, p_fingerprint, ok, wait)
      with ordinality as u(tenant_id, key, method, path, fp, ok, wait, i)),
  firsts as (
    select distinct on (r.tenant_id, r.key) r.* from req r
    where r.ok and r.key is not null order by r.tenant_id, r.key, r.i),
  claims as (
    insert into idempotency_keys as k (tenant_id, key, method, path, fingerprint, locked_at, created_at, expires_at)
      select f.tenant_id, f.key, f.method, f.path, f.fp, p_now, p_now, p_expires from firsts f order by f.tenant_id, f.key
    on conflict (tenant_id, key) do update set method = excluded.method, path = excluded.path,
      fingerprint = excluded.fingerprint, locked_at = excluded.locked_at, status_code = null, response_body = null,
      response_headers = null, created_at = excluded.created_at, expires_at = excluded.expires_at
      where k.expires_at < p_now
    returning k.tenant_id, k.key)
  -- A later request with a key its batch claimed finds that claim; any other finds the key's record.
  select r.ok, r.wait, c.key is not null,
    case when cd.key is not null then d.fp else e.fingerprint end,
    case when cd.key is not null then p_now else e.locked_at end,
    case when cd.key is not null then null else e.status_code end,
    case when cd.key is not null then null else e.response_body end,
    case when cd.key is not null then null else e.response_headers end
  from req r
  left join firsts f on f.i = r.i
  left join claims c on c.tenant_id = f.tenant_id and c.key = f.key
  left join firsts d on d.tenant_id = r.tenant_id and d.key = r.key and d.i <> r.i
  left join claims cd on cd.tenant_id = d.tenant_id and cd.key = d.key
  left join idempotency_keys e on r.ok and c.key is null and e.tenant_id = r.tenant_id and e.key = r.key
  order by r.i;
end
$fn$`;
