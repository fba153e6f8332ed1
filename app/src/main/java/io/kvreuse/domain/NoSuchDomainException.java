package io.kvreuse.domain;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;

/** The addressed layout domain does not exist (404 {@code domain-not-found}). */
public class NoSuchDomainException extends KvReuseException {

    public NoSuchDomainException(String domainId) {
        super(ProblemType.DOMAIN_NOT_FOUND, "no layout domain " + domainId);
        with("domainId", domainId);
    }
}
