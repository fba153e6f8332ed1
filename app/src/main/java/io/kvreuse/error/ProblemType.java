package io.kvreuse.error;

import io.kvreuse.protocol.WireProblem;
import java.net.URI;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The catalogue of every problem kvreuse answers: its stable slug (the last segment of the RFC 9457
 * {@code type} URI), its fixed title and its HTTP status. Every problem document and every domain
 * exception names one of these; the served OpenAPI document lists them. Entries marked as answered
 * by any operation are the transport's and framework's refusals (a body too large, a missing token);
 * the others belong to the feature named in their group.
 */
public enum ProblemType {

    // ---- any operation: request shape, transport and framework (the web layer) ----
    INVALID_REQUEST(400, "invalid-request", "Invalid request", true),
    MALFORMED_REQUEST(400, "malformed-request", "Malformed request body", true),
    INVALID_PARAMETER(400, "invalid-parameter", "Invalid parameter", true),
    INVALID_VALUE(400, "invalid-value", "Invalid value", true),
    REJECTED_REQUEST(400, "rejected-request", "Rejected request", true),
    MALFORMED_REQUEST_HEAD(400, "malformed-request-head", "Malformed request line or headers", true),
    UNAUTHORIZED(401, "unauthorized", "Authentication required", true),
    FORBIDDEN(403, "forbidden", "Forbidden", true),
    NOT_FOUND(404, "not-found", "Not found", true),
    METHOD_NOT_ALLOWED(405, "method-not-allowed", "Method not allowed", true),
    NOT_ACCEPTABLE(406, "not-acceptable", "Not acceptable", true),
    REQUEST_TIMEOUT(408, "request-timeout", "Request timeout", true),
    CONFLICT(409, "conflict", "Conflicting state", true),
    PAYLOAD_TOO_LARGE(413, "payload-too-large", "Request body too large", true),
    URI_TOO_LONG(414, "uri-too-long", "Request line too long", true),
    UNSUPPORTED_MEDIA_TYPE(415, "unsupported-media-type", "Unsupported media type", true),
    REQUEST_HEADER_FIELDS_TOO_LARGE(431, "request-header-fields-too-large", "Request headers too large", true),
    INTERNAL_ERROR(500, "internal-error", "Internal error", true),
    STORE_UNAVAILABLE(503, "store-unavailable", "Store unavailable", true),

    // ---- sequence hashes and idempotency keys ----
    INVALID_HASH(400, "invalid-hash", "Invalid sequence hash"),
    INVALID_IDEMPOTENCY_KEY(400, "invalid-idempotency-key", "Invalid Idempotency-Key"),
    IDEMPOTENCY_KEY_REUSED(422, "idempotency-key-reused", "Idempotency key reused"),

    // ---- tokens ----
    HOST_REQUIRED(400, "host-required", "Host required"),
    HOST_NOT_ALLOWED(400, "host-not-allowed", "Host not allowed for this role"),
    TOKEN_NOT_FOUND(404, "token-not-found", "No such active token"),

    // ---- layout domains ----
    UNKNOWN_FIELD(400, "unknown-field", "Unknown field"),
    DUPLICATE_EXTRA_KEY(400, "duplicate-extra-key", "Duplicate extra key"),
    DOMAIN_NOT_FOUND(404, "domain-not-found", "No such layout domain"),
    DOMAIN_REVOKED(422, "domain-revoked", "Layout domain revoked"),
    PARALLELISM_NOT_SUPPORTED(422, "parallelism-not-supported", "Parallelism not supported"),
    CPU_TRANSPORT_REQUIRES_TP1(422, "cpu-transport-requires-tp1", "CPU transport requires TP 1"),
    MIXED_TRANSPORT_NOT_SUPPORTED(422, "mixed-transport-not-supported", "Mixed CPU and GPU transport not supported"),
    TRANSFORM_NOT_SUPPORTED(422, "transform-not-supported", "Transformed layout not supported"),
    HEAD_PARTITION_NOT_SUPPORTED(422, "head-partition-not-supported", "Head partition not supported"),
    TP_MUST_DIVIDE_KV_HEADS(422, "tp-must-divide-kv-heads", "TP size must divide the KV heads"),

    // ---- engine incarnations ----
    DUPLICATE_GPU(400, "duplicate-gpu", "Duplicate GPU"),
    HOST_OUT_OF_SCOPE(403, "host-out-of-scope", "Host outside the token's scope"),
    INCARNATION_NOT_FOUND(404, "incarnation-not-found", "No such incarnation"),
    STALE_EPOCH(409, WireProblem.STALE_EPOCH.slug(), "Stale fencing epoch"),
    ILLEGAL_TRANSITION(409, "illegal-transition", "Illegal state transition"),
    INCARNATION_LOST(409, "incarnation-lost", "Incarnation lost"),
    INCARNATION_ID_REUSED(409, "incarnation-id-reused", "Incarnation id reused"),
    STABLE_NAME_HELD(409, "stable-name-held", "Stable name held"),
    GPU_ORDINAL_IN_USE(409, "gpu-ordinal-in-use", "GPU ordinal in use"),
    CONCURRENT_CHANGE(409, "concurrent-change", "Concurrent change"),
    UNKNOWN_DOMAIN(422, "unknown-domain", "Unknown layout domain"),
    RANK_LAYOUT_MISMATCH(422, "rank-layout-mismatch", "Ranks do not match the domain"),

    // ---- destination regions ----
    INVALID_DESTINATION_REGION(400, "invalid-destination-region", "Invalid destination region"),
    INCARNATION_NOT_OPEN(409, "incarnation-not-open", "Incarnation does not take new regions"),
    DESTINATION_REGION_DIFFERS(409, "destination-region-differs", "Destination region registered differently"),
    REGION_HELD(409, "region-held", "Region held by another incarnation"),
    DESTINATION_REGION_NOT_REGISTERED(422, "destination-region-not-registered", "Destination region not registered"),

    // ---- retained banks and their inventory ----
    INVALID_BLOCK(400, "invalid-block", "Invalid inventory batch"),
    INVALID_EVENT(400, "invalid-event", "Invalid inventory batch"),
    BATCH_TOO_LARGE(400, "batch-too-large", "Invalid inventory batch"),
    DUPLICATE_SLOT(400, "duplicate-slot", "Invalid inventory batch"),
    SLOT_OUT_OF_RANGE(400, "slot-out-of-range", "Invalid inventory batch"),
    POSITION_CONTRADICTS_PARENT(400, "position-contradicts-parent", "Invalid inventory batch"),
    EVENT_SOURCE_RANKS(400, "event-source-ranks", "Invalid event source"),
    INVALID_EVENT_SOURCE(400, "invalid-event-source", "Invalid event source"),
    INVALID_EVENT_ENDPOINT(400, "invalid-event-endpoint", "Invalid event source"),
    TOKEN_HOST_MISMATCH(403, "token-host-mismatch", "Token bound to another host"),
    BANK_NOT_FOUND(404, "bank-not-found", "No such bank"),
    BANK_PART_NOT_FOUND(404, "bank-part-not-found", "No such bank part"),
    EVENT_SOURCE_NOT_FOUND(404, "event-source-not-found", "No event source"),
    INCARNATION_NOT_LIVE(409, "incarnation-not-live", "Incarnation is not live"),
    BANK_EXISTS(409, "bank-exists", "Incarnation already has a bank"),
    BANK_DROPPED(409, "bank-dropped", "Bank dropped"),
    EVENT_GAP(409, "event-gap", "Inventory event gap"),
    SNAPSHOT_REQUIRED(409, "snapshot-required", "Snapshot required"),
    STALE_SNAPSHOT(409, "stale-snapshot", "Stale snapshot"),
    BLOCK_PINNED(409, "block-pinned", "Block is pinned"),
    NOT_A_DECODE_INCARNATION(422, "not-a-decode-incarnation", "Only decode incarnations retain banks"),
    BYTES_PER_BLOCK_MISMATCH(422, "bytes-per-block-mismatch", "Block size differs from the domain"),

    // ---- leases ----
    NOT_LEASE_PARTY(403, "not-lease-party", "Not a party to the lease"),
    NO_SUCH_LEASE(404, "no-such-lease", "No such lease"),
    NO_SUCH_COMMAND(404, "no-such-command", "No such command"),
    LEASE_STATE_CONFLICT(409, "lease-state-conflict", "Lease is not in a state for this report"),
    LEASE_FENCED(409, "lease-fenced", "Lease fenced"),
    DESTINATION_OVERLAP(409, "destination-overlap", "Destination slots already allocated"),
    DESTINATION_EXISTS(409, "destination-exists", "Destination already reported"),

    // ---- node agents and transfer orders ----
    NOT_HOST_OWNER(403, "not-host-owner", "Host owned by another agent"),
    NO_SUCH_AGENT(404, WireProblem.NO_SUCH_AGENT.slug(), "No such agent"),
    NO_SUCH_ORDER(404, "no-such-order", "No such order"),
    NO_SUCH_PART(404, "no-such-part", "No such order part"),
    PART_FINAL(409, "part-final", "Part already final"),

    // ---- reuse settings ----
    UNKNOWN_SETTING(400, "unknown-setting", "Unknown setting"),
    INVALID_SETTINGS(400, "invalid-settings", "Invalid settings"),
    SETTINGS_VERSION_CONFLICT(409, "settings-version-conflict", "Settings changed meanwhile"),

    // ---- cleanup ----
    NO_SUCH_CLEANUP_PLAN(404, "no-such-cleanup-plan", "No such cleanup plan"),
    CLEANUP_PLAN_EXECUTED(409, "cleanup-plan-executed", "Plan already executed"),
    CLEANUP_PLAN_SUPERSEDED(409, "cleanup-plan-superseded", "Plan superseded"),
    CLEANUP_PLAN_STALE(409, "cleanup-plan-stale", "Plan is stale"),
    NOT_A_CLEANUP_CANDIDATE(422, "not-a-cleanup-candidate", "Not a cleanup candidate"),
    QUIESCENCE_ATTESTATION_REQUIRED(422, "quiescence-attestation-required", "Quiescence not proven");

    /** Base of every problem {@code type} URI; the slug after it is stable per problem. */
    public static final String TYPE_BASE = WireProblem.TYPE_BASE;

    private static final Map<String, ProblemType> BY_SLUG =
            Arrays.stream(values()).collect(Collectors.toUnmodifiableMap(ProblemType::slug, Function.identity()));

    private final int status;
    private final String slug;
    private final String title;
    private final boolean anyOperation;

    ProblemType(int status, String slug, String title) {
        this(status, slug, title, false);
    }

    ProblemType(int status, String slug, String title, boolean anyOperation) {
        this.status = status;
        this.slug = slug;
        this.title = title;
        this.anyOperation = anyOperation;
    }

    /** The HTTP status this problem is answered with. */
    public int status() {
        return status;
    }

    /** The last segment of the {@code type} URI, stable per problem. */
    public String slug() {
        return slug;
    }

    /** The fixed phrase of this problem (never a class name, never this occurrence). */
    public String title() {
        return title;
    }

    /** The RFC 9457 {@code type}. */
    public URI type() {
        return URI.create(uri());
    }

    /** The RFC 9457 {@code type} as a string. */
    public String uri() {
        return TYPE_BASE + slug;
    }

    /** Whether any operation may answer it (a transport or framework refusal, not a feature's rule). */
    public boolean anyOperation() {
        return anyOperation;
    }

    /** A transient trouble: the answer says {@code retryable} and carries {@code Retry-After}. */
    public boolean retryable() {
        return status == 503;
    }

    /** The catalogue entry of a slug. */
    public static Optional<ProblemType> ofSlug(String slug) {
        return Optional.ofNullable(BY_SLUG.get(slug));
    }

    /**
     * The problem any operation answers with for a bare HTTP status (a framework's refusal that
     * names no problem of its own): the any-operation entry of that status, else a 400 or 500.
     */
    public static ProblemType forStatus(int status) {
        for (ProblemType p : values()) {
            if (p.anyOperation && p.status == status) {
                return p;
            }
        }
        return status >= 500 ? INTERNAL_ERROR : INVALID_REQUEST;
    }
}
