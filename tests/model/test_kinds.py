"""FirstOf: the first matching class, decided once per concrete type."""

from __future__ import annotations

from bundler.model.events import ClaimEvent, EventBase, IndividualEvent, WorkflowNodeEvent
from bundler.model.kinds import FirstOf


class _Base:
    pass


class _Child(_Base):
    pass


class _Other:
    pass


def test_the_first_class_in_order_wins_and_none_gives_the_count() -> None:
    kind = FirstOf(_Child, _Base)
    assert kind(_Child()) == 0          # an instance of both: the first listed
    assert kind(_Base()) == 1
    assert kind(_Other()) == 2
    assert FirstOf(_Base, _Child)(_Child()) == 0


def test_it_agrees_with_isinstance_on_every_event_type() -> None:
    classes = (ClaimEvent, IndividualEvent, WorkflowNodeEvent)
    kind = FirstOf(*classes)
    samples = [cls.model_construct() for cls in EventBase.__subclasses__()]
    assert len(samples) >= 5
    for ev in samples:
        expected = next((i for i, c in enumerate(classes) if isinstance(ev, c)), 3)
        assert kind(ev) == expected, type(ev).__name__


class _Counting(type):
    """Counts the isinstance tests that reach the class (all but exact-type matches)."""

    tests = 0

    def __instancecheck__(cls, obj: object) -> bool:
        _Counting.tests += 1
        return type.__instancecheck__(cls, obj)


class _A(metaclass=_Counting):
    pass


class _B(metaclass=_Counting):
    pass


def test_the_answer_is_remembered_per_type_not_per_object() -> None:
    kind = FirstOf(_A, _B)
    _Counting.tests = 0
    assert kind(_Other()) == 2
    assert _Counting.tests == 2          # both classes asked, the first time
    assert kind(_Other()) == 2
    assert kind(_Other()) == 2
    assert _Counting.tests == 2          # then never again for that type
