"""The decoding loop's key/value cache (selfplay.llm.kv_cache): the values of
transformers' DynamicCache, bit for bit, written into one buffer per layer."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers.cache_utils import DynamicCache  # noqa: E402

from selfplay.llm.kv_cache import reserved_cache  # noqa: E402


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=97,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    return transformers.LlamaForCausalLM(config).eval()


def _decode(model, cache, steps: int = 12, drop_at: int = 5):
    """The backend's sequence on a cache: a shared head for one row, repeated to three
    prompts, their left-padded rest, copied to four rows, decoding steps, two rows leaving.
    Returns every step's logits and the cache."""
    generator = torch.Generator().manual_seed(1)
    head = torch.randint(3, 97, (1, 7), generator=generator)
    rest = torch.randint(3, 97, (3, 5), generator=generator)
    logits = []
    with torch.inference_mode():
        cache = model(input_ids=head, past_key_values=cache, use_cache=True, logits_to_keep=1).past_key_values
        cache.batch_repeat_interleave(3)
        attention = torch.ones(3, 12, dtype=torch.long)
        attention[0, 7:9] = 0  # the first prompt's rest is two tokens shorter: padding in the middle
        positions = (attention.cumsum(-1) - 1).masked_fill(attention == 0, 0)[:, 7:]
        out = model(
            input_ids=rest,
            attention_mask=attention,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        cache = out.past_key_values
        rows = torch.tensor([0, 1, 1, 2])
        cache.batch_select_indices(rows)
        attention, next_position = attention[rows], positions[rows][:, -1:] + 1
        token = out.logits[rows, -1].argmax(-1)
        logits.append(out.logits[rows, -1])
        for step in range(steps):
            if step == drop_at:
                kept = torch.tensor([0, 2])
                cache.batch_select_indices(kept)
                attention, next_position, token = attention[kept], next_position[kept], token[kept]
            attention = torch.cat([attention, attention.new_ones((len(token), 1))], dim=1)
            out = model(
                input_ids=token[:, None],
                attention_mask=attention,
                position_ids=next_position,
                past_key_values=cache,
                use_cache=True,
            )
            logits.append(out.logits[:, -1])
            token, next_position = out.logits[:, -1].argmax(-1), next_position + 1
    return logits, cache


def test_the_logits_equal_those_of_dynamic_cache_bit_for_bit(model):
    expected, dynamic = _decode(model, DynamicCache(config=model.config))
    got, reserved = _decode(model, reserved_cache(model, capacity=12 + 12))
    assert len(got) == len(expected) == 13
    for step, (a, b) in enumerate(zip(got, expected)):
        assert torch.equal(a, b), f"step {step} differs"
    assert reserved.get_seq_length() == dynamic.get_seq_length() == 24
    for mine, theirs in zip(reserved.layers, dynamic.layers):
        assert torch.equal(mine.keys, theirs.keys) and torch.equal(mine.values, theirs.values)


def test_decoding_writes_into_the_buffer_it_allocated_first(model):
    """No step allocates: after the rows are copied out (select), every step writes into
    the same storage; a too-small capacity grows (to twice) and still gives the same values."""
    _, cache = _decode(model, reserved_cache(model, capacity=40), steps=0)
    layer = cache.layers[0]
    pointer, size = layer.key_buffer.data_ptr(), layer.key_buffer.shape[-2]
    assert size == 40 and layer.keys.shape[-2] == 12
    token = torch.tensor([[5], [6], [7], [8]])
    with torch.inference_mode():
        for length in range(13, 19):
            model(input_ids=token, past_key_values=cache, use_cache=True)
            assert layer.key_buffer.data_ptr() == pointer and layer.keys.shape[-2] == length
    expected, _ = _decode(model, DynamicCache(config=model.config))
    small, grown = _decode(model, reserved_cache(model, capacity=8))
    assert grown.layers[0].key_buffer.shape[-2] >= 24
    assert all(torch.equal(a, b) for a, b in zip(small, expected))


def test_crop_and_reset_follow_the_length(model):
    _, cache = _decode(model, reserved_cache(model, capacity=30), steps=3)
    layer = cache.layers[1]
    assert layer.get_seq_length() == 15
    cache.crop(-4)
    assert layer.get_seq_length() == 11 and layer.keys.shape[-2] == 11
    cache.reset()
    assert cache.get_seq_length() == 0
