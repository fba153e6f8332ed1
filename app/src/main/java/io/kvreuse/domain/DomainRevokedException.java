package io.kvreuse.domain;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemKind;

/** The layout domain was revoked: nothing new may use it (422 {@code domain-revoked}). */
public class DomainRevokedException extends KvReuseException {

    public DomainRevokedException(LayoutDomain domain) {
        super(
                ProblemKind.REFUSED,
                "domain-revoked",
                "Layout domain revoked",
                "layout domain " + domain.domainId() + " was revoked: " + domain.revokeReason());
        with("domainId", domain.domainId());
    }
}
