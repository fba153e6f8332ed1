package io.kvreuse.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConversationTests {

    private final Conversation smoke = Conversation.servingSmoke(7);

    @Test
    void servingSmokePromptsAddUpTo657Tokens() {
        assertThat(List.of(smoke.promptTokens(0), smoke.promptTokens(1), smoke.promptTokens(2)))
                .containsExactly(20, 212, 425);
        assertThat(smoke.promptTokens(0) + smoke.promptTokens(1) + smoke.promptTokens(2))
                .isEqualTo(657);
    }

    @Test
    void contextsAfterTheFirstTwoTurnsAreWholeBlocksADonorCanServe() {
        assertThat(smoke.contextTokens(0)).isEqualTo(192);
        assertThat(smoke.contextBlocks(0)).hasSize(12);
        assertThat(smoke.contextTokens(1)).isEqualTo(384);
        assertThat(smoke.contextBlocks(1)).hasSize(24);
        // the prompt of the next turn holds one more full block than the donor: 13 and 26
        assertThat(smoke.promptBlocks(1)).hasSize(13);
        assertThat(smoke.promptBlocks(2)).hasSize(26);
    }

    @Test
    void laterTurnsShareTheEarlierTurnsHashesAsTheirPrefix() {
        long[] afterFirst = smoke.contextBlocks(0);
        long[] secondPrompt = smoke.promptBlocks(1);
        assertThat(Arrays.copyOf(secondPrompt, afterFirst.length)).containsExactly(afterFirst);
        assertThat(Arrays.copyOf(smoke.promptBlocks(2), 24)).containsExactly(smoke.contextBlocks(1));
    }

    @Test
    void sameSeedSameHashesAnotherSeedOthers() {
        assertThat(Conversation.servingSmoke(7).promptBlocks(2)).containsExactly(smoke.promptBlocks(2));
        long[] other = Conversation.servingSmoke(8).promptBlocks(2);
        assertThat(Arrays.stream(other)
                        .filter(h -> Arrays.stream(smoke.promptBlocks(2)).anyMatch(x -> x == h)))
                .isEmpty();
        assertThat(Arrays.stream(smoke.contextBlocks(2)).distinct().count()).isEqualTo(smoke.contextBlocks(2).length);
    }

    @Test
    void aTurnNeedsUserTokens() {
        assertThatThrownBy(() -> new Conversation.Turn(0, 10)).isInstanceOf(IllegalArgumentException.class);
    }
}
