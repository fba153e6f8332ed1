package io.kvreuse.domain;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemKind;

/** The addressed layout domain does not exist (404 {@code domain-not-found}). */
public class NoSuchDomainException extends KvReuseException {

    public NoSuchDomainException(String domainId) {
        super(ProblemKind.NOT_FOUND, "domain-not-found", "No such layout domain", "no layout domain " + domainId);
        with("domainId", domainId);
    }
}
