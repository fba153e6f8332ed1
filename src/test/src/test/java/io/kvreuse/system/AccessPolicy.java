package io.kvreuse.system;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The intended access policy of every operation of the OpenAPI document (API.md, README "Calling
 * it", DESIGN §7), written down once as a table and read by the authorization matrix and the fuzzer.
 *
 * <p>Cells, for a token of that role:
 *
 * <ul>
 *   <li>{@code yes}: allowed whoever owns what (reads and lists that filter by ownership, creates);
 *   <li>{@code own:404}: an ENGINE token only on incarnations it registered (and their banks,
 *       commands and leases it is a party to); another engine's resource answers 404, as if it did
 *       not exist, so a token cannot probe for ids (the documented choice of the incarnation, bank
 *       and lease features; API.md's general rule says 403);
 *   <li>{@code host:403} / {@code host:404}: an AGENT token only for its own host (the one it was
 *       bound to when minted); another host's agent gets 403 on host-addressed resources (also on
 *       a host nobody registered yet) and 404 on lease-addressed ones, as above;
 *   <li>{@code scope:403}: an ENGINE token scoped to another host may not register there: 403;
 *   <li>{@code -}: the role may not call it: 403;
 * </ul>
 *
 * <p>Without a token, or with an unknown, malformed or revoked one, every operation answers 401;
 * {@code /actuator/health/**} is open (checked apart, it is not in the document).
 */
final class AccessPolicy {

    /** What one caller may expect from one operation. */
    enum Expected {
        ALLOWED,
        UNAUTHENTICATED,
        FORBIDDEN,
        HIDDEN;

        int status() {
            return switch (this) {
                case ALLOWED -> 200;
                case UNAUTHENTICATED -> 401;
                case FORBIDDEN -> 403;
                case HIDDEN -> 404;
            };
        }
    }

    static final String TABLE = """
            | operation                                              | ROUTER | ENGINE  | AGENT    | OPERATOR |
            |--------------------------------------------------------|--------|---------|----------|----------|
            | GET /api/v1/tokens                                     | -      | -       | -        | yes      |
            | POST /api/v1/tokens                                    | -      | -       | -        | yes      |
            | DELETE /api/v1/tokens/{tokenId}                        | -      | -       | -        | yes      |
            | GET /api/v1/domains                                    | yes    | yes     | yes      | yes      |
            | GET /api/v1/domains/{domainId}                         | yes    | yes     | yes      | yes      |
            | POST /api/v1/domains                                   | -      | -       | -        | yes      |
            | POST /api/v1/domains/{domainId}/revoke                 | -      | -       | -        | yes      |
            | GET /api/v1/incarnations                               | -      | yes     | yes      | yes      |
            | POST /api/v1/incarnations                              | -      | scope:403 | -      | -        |
            | GET /api/v1/incarnations/{id}                          | -      | own:404 | host:404 | yes      |
            | POST /api/v1/incarnations/{id}/heartbeat               | -      | own:404 | -        | -        |
            | POST /api/v1/incarnations/{id}/drain                   | -      | own:404 | -        | -        |
            | POST /api/v1/incarnations/{id}/exit                    | -      | own:404 | -        | -        |
            | GET /api/v1/incarnations/{id}/commands                 | -      | own:404 | -        | -        |
            | POST /api/v1/incarnations/{id}/commands/{commandId}/ack | -     | own:404 | -        | -        |
            | POST /api/v1/incarnations/{id}/commands/acks           | -      | own:404 | -        | -        |
            | POST /api/v1/incarnations/{id}/destinations            | -      | own:404 | -        | -        |
            | POST /api/v1/incarnations/{id}/commits                 | -      | own:404 | -        | -        |
            | POST /api/v1/incarnations/{incarnationId}/banks        | -      | own:404 | -        | -        |
            | GET /api/v1/incarnations/{id}/destination-regions      | -      | own:404 | host:404 | yes      |
            | POST /api/v1/incarnations/{id}/destination-regions     | -      | own:404 | -        | -        |
            | GET /api/v1/banks/{bankId}                             | -      | own:404 | host:404 | yes      |
            | POST /api/v1/banks/{bankId}/parts/{rank}/ready         | -      | own:404 | -        | -        |
            | POST /api/v1/banks/{bankId}/reset                      | -      | own:404 | host:404 | -        |
            | POST /api/v1/banks/{bankId}/events                     | -      | own:404 | host:404 | -        |
            | PUT /api/v1/banks/{bankId}/parts/{rank}/snapshot       | -      | own:404 | -        | -        |
            | POST /api/v1/banks/{bankId}/parts/{rank}/stream-breaks | -      | own:404 | host:404 | -        |
            | GET /api/v1/banks/{bankId}/event-source                | -      | own:404 | host:404 | yes      |
            | PUT /api/v1/banks/{bankId}/event-source                | -      | own:404 | -        | -        |
            | GET /api/v1/agents/{hostId}/event-sources              | -      | -       | host:403 | yes      |
            | POST /api/v1/donor-selections                          | yes    | -       | -        | -        |
            | POST /api/v1/donor-selections/batch                    | yes    | -       | -        | -        |
            | GET /api/v1/settings/reuse                             | yes    | yes     | yes      | yes      |
            | PUT /api/v1/settings/reuse                             | -      | -       | -        | yes      |
            | GET /api/v1/leases                                     | -      | yes     | yes      | yes      |
            | GET /api/v1/leases/{leaseId}                           | -      | own:404 | host:404 | yes      |
            | POST /api/v1/leases/{leaseId}/destination              | -      | own:404 | -        | yes      |
            | POST /api/v1/leases/{leaseId}/commit                   | -      | own:404 | -        | yes      |
            | POST /api/v1/leases/{leaseId}/abort                    | -      | own:404 | -        | yes      |
            | POST /api/v1/leases/{leaseId}/quiesced                 | -      | own:404 | host:404 | yes      |
            | GET /api/v1/agents                                     | -      | -       | yes      | yes      |
            | POST /api/v1/agents                                    | -      | -       | host:403 | -        |
            | GET /api/v1/agents/{hostId}                            | -      | -       | host:403 | yes      |
            | POST /api/v1/agents/{hostId}/heartbeat                 | -      | -       | host:403 | -        |
            | GET /api/v1/agents/{hostId}/orders                     | -      | -       | host:403 | -        |
            | GET /api/v1/agents/{hostId}/orders/unfinished          | -      | -       | host:403 | yes      |
            | POST /api/v1/orders/{orderId}/parts/{rank}             | -      | -       | host:403 | -        |
            | POST /api/v1/agents/{hostId}/parts                     | -      | -       | host:403 | -        |
            | GET /api/v1/cleanup/candidates                         | -      | -       | -        | yes      |
            | POST /api/v1/cleanup/plans                             | -      | -       | -        | yes      |
            | GET /api/v1/cleanup/plans/{planId}                     | -      | -       | -        | yes      |
            | POST /api/v1/cleanup/plans/{planId}/execute            | -      | -       | -        | yes      |
            | GET /api/v1/audit                                      | -      | -       | -        | yes      |
            """;

    /** Roles in the table's column order. */
    static final List<String> ROLES = List.of("ROUTER", "ENGINE", "AGENT", "OPERATOR");

    private static final Map<String, Map<String, String>> RULES = parse();

    private AccessPolicy() {}

    /** Every operation the table covers, as {@code METHOD path}. */
    static java.util.Set<String> operations() {
        return RULES.keySet();
    }

    /** The cell of one role for one operation ({@code yes}, {@code -}, {@code own:404}, …). */
    static String cell(String operation, String role) {
        Map<String, String> row = RULES.get(operation);
        if (row == null) {
            throw new AssertionError("no access policy written down for " + operation + " (add a row to the table)");
        }
        return row.get(role);
    }

    /** What a caller may expect from an operation, by the table. */
    static Expected expected(String operation, Caller caller) {
        if (caller.role() == null) {
            return Expected.UNAUTHENTICATED;
        }
        String cell = cell(operation, caller.role());
        if (cell.equals("-")) {
            return Expected.FORBIDDEN;
        }
        if (!caller.foreign() || cell.equals("yes")) {
            return Expected.ALLOWED;
        }
        return cell.endsWith(":404") ? Expected.HIDDEN : Expected.FORBIDDEN;
    }

    /** Whether a role's cell restricts it to what it owns (so a foreign caller of that role is refused). */
    static boolean ownershipApplies(String operation, String role) {
        String cell = cell(operation, role);
        return cell.startsWith("own:") || cell.startsWith("host:") || cell.startsWith("scope:");
    }

    private static Map<String, Map<String, String>> parse() {
        Map<String, Map<String, String>> rules = new LinkedHashMap<>();
        for (String line : TABLE.strip().split("\n")) {
            String[] cells = line.strip().split("\\|");
            String op = cells[1].strip();
            if (op.equals("operation") || op.startsWith("---")) {
                continue;
            }
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < ROLES.size(); i++) {
                row.put(ROLES.get(i), cells[i + 2].strip());
            }
            rules.put(op, row);
        }
        return rules;
    }
}
