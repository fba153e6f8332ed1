package io.kvreuse.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The group commit on its own: a request alone runs at once; requests that arrive while the writers
 * are busy go together, in arrival order and up to the size bound, into the next group; a group
 * that fails runs each of its requests again alone, so only the bad one fails.
 */
class GroupCommitTests {

    /** The groups a run saw, and a gate that holds the first group until released. */
    private final List<List<Integer>> groups = new CopyOnWriteArrayList<>();

    private final Sinks.Empty<Void> gate = Sinks.empty();

    private Mono<List<String>> run(List<Integer> group) {
        groups.add(group);
        Mono<Void> wait = groups.size() == 1 ? gate.asMono() : Mono.empty();
        return wait.then(Mono.fromCallable(() -> {
            if (group.contains(-1)) {
                throw new IllegalStateException("a bad request in " + group);
            }
            return group.stream().map(i -> "answer " + i).toList();
        }));
    }

    @Test
    void aRequestAloneRunsAtOnceAndLaterOnesGoTogetherInArrivalOrder() {
        GroupCommit<Integer, String> commit = new GroupCommit<>(1, 3, this::run);
        List<String> answers = Collections.synchronizedList(new ArrayList<>());
        commit.submit(0).subscribe(answers::add);
        assertThat(groups).containsExactly(List.of(0));
        for (int i = 1; i <= 5; i++) {
            commit.submit(i).subscribe(answers::add);
        }
        // the first group is still in flight: nothing else has started
        assertThat(groups).hasSize(1);
        assertThat(commit.stalled(Duration.ZERO)).isTrue();
        gate.tryEmitEmpty();
        assertThat(groups).containsExactly(List.of(0), List.of(1, 2, 3), List.of(4, 5));
        assertThat(answers).containsExactly("answer 0", "answer 1", "answer 2", "answer 3", "answer 4", "answer 5");
        assertThat(commit.stalled(Duration.ZERO)).isFalse();
    }

    @Test
    void aRequestStillQueuedPastItsStartByCompletesEmptyWithoutRunning() {
        GroupCommit<Integer, String> commit = new GroupCommit<>(1, 10, this::run);
        List<String> answers = Collections.synchronizedList(new ArrayList<>());
        List<Integer> completed = Collections.synchronizedList(new ArrayList<>());
        commit.submit(0).subscribe(answers::add);
        long now = System.nanoTime();
        commit.submit(1, now - 1).subscribe(answers::add, e -> {}, () -> completed.add(1));
        commit.submit(2, now + Duration.ofMinutes(1).toNanos())
                .subscribe(answers::add, e -> {}, () -> completed.add(2));
        commit.submit(3).subscribe(answers::add);
        gate.tryEmitEmpty();
        assertThat(groups).containsExactly(List.of(0), List.of(2, 3));
        assertThat(answers).containsExactly("answer 0", "answer 2", "answer 3");
        assertThat(completed).as("1 completed empty, before 2 was answered").containsExactly(1, 2);
    }

    @Test
    void aFailedGroupRunsItsRequestsAloneAndOnlyTheBadOneFails() {
        GroupCommit<Integer, String> commit = new GroupCommit<>(1, 10, this::run);
        List<String> answers = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        commit.submit(0).subscribe(answers::add);
        for (int i : List.of(1, -1, 2)) {
            commit.submit(i).subscribe(answers::add, errors::add);
        }
        gate.tryEmitEmpty();
        assertThat(groups).containsExactly(List.of(0), List.of(1, -1, 2), List.of(1), List.of(-1), List.of(2));
        assertThat(answers).containsExactly("answer 0", "answer 1", "answer 2");
        assertThat(errors).singleElement().satisfies(e -> assertThat(e).hasMessage("a bad request in [-1]"));
    }

    @Test
    void severalWritersRunGroupsSideBySide() {
        GroupCommit<Integer, String> commit = new GroupCommit<>(2, 10, this::run);
        List<String> answers = Collections.synchronizedList(new ArrayList<>());
        commit.submit(0).subscribe(answers::add);
        commit.submit(1).subscribe(answers::add);
        // the second writer took request 1 while the first group waits
        assertThat(groups).containsExactly(List.of(0), List.of(1));
        assertThat(answers).containsExactly("answer 1");
        gate.tryEmitEmpty();
        assertThat(answers).containsExactly("answer 1", "answer 0");
    }
}
