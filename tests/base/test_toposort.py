"""The one topological sort the engine and the passes share."""

from shapeinfer.base.toposort import lexicographic_order


def test_a_valid_order_is_kept():
    assert lexicographic_order([[], [0], [0, 1], [2, 2]]) == [0, 1, 2, 3]


def test_producers_come_first_lowest_ready_position_first():
    # 0 reads 2, 1 reads nothing, 2 reads 1, 3 reads nothing
    assert lexicographic_order([[2], [], [1], []]) == [1, 2, 0, 3]


def test_nodes_on_or_after_a_cycle_are_left_out_and_self_reads_ignored():
    assert lexicographic_order([[], [2], [1], [2], [4]]) == [0, 4]
