package io.kvreuse.domain;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;

/** The layout domain was revoked: nothing new may use it (422 {@code domain-revoked}). */
public class DomainRevokedException extends KvReuseException {

    public DomainRevokedException(LayoutDomain domain) {
        super(
                ProblemType.DOMAIN_REVOKED,
                "layout domain " + domain.domainId() + " was revoked: " + domain.revokeReason());
        with("domainId", domain.domainId());
    }
}
