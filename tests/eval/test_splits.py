from contextweaver.eval.splits import split_of


def test_split_is_stable_and_about_a_third() -> None:
    ids = [f"org__repo-{i}" for i in range(3000)]
    held = [i for i in ids if split_of(i) == "validation"]
    assert 900 < len(held) < 1100
    assert [split_of(i) for i in ids] == [split_of(i) for i in ids]
    assert {split_of(i) for i in ids} == {"train", "validation"}
