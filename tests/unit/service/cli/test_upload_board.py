"""`shortlist upload`'s progress: bytes only move forward, even when a part is sent again,
and each file's state (sent, pages extracted, settled) is shown while it waits."""

from __future__ import annotations

import io
import threading

from service.cli.upload import forward_only
from service.cli.upload_board import UploadBoard


def test_bytes_taken_back_for_a_resent_part_show_only_once_they_are_sent_again() -> None:
    steps: list[int] = []
    report = forward_only(steps.append)

    for count in (100, 50, -50, 30, 30, 40):
        report(count)

    assert steps == [100, 50, 10, 40]
    assert sum(steps) == 200


def test_a_log_gets_a_line_per_new_state_and_page_count_of_each_file() -> None:
    log = io.StringIO()
    board = UploadBoard(["manual.pdf", "note.md"], log, live=False)

    board.sending(0, 1000)
    board.sending(1, 10)
    for _ in range(4):
        board.sent(0, 250)  # byte counts are not logged
    board.sent(1, 10)
    board.extracting(1)
    board.document(1, {"status": "ready", "page_count": 1})
    board.extracting(0)
    for progress in (None, (16, 400), (16, 400), (32, 400)):
        shown = {"pages_done": progress[0], "page_count": progress[1]} if progress else None
        board.document(0, {"status": "processing", "progress": shown})
    board.document(0, {"status": "error", "error": {"message": "This PDF is a scan"}})
    board.close()

    assert log.getvalue().splitlines() == [
        "manual.pdf: sending 0%",
        "note.md: sending 0%",
        "note.md: extracting",
        "note.md: ready, 1 page",
        "manual.pdf: extracting",
        "manual.pdf: extracting, page 16/400",
        "manual.pdf: extracting, page 32/400",
        "manual.pdf: error — This PDF is a scan",
    ]


def test_a_terminal_board_redraws_the_files_in_flight_and_prints_settled_ones_for_good() -> None:
    screen = io.StringIO()
    board = UploadBoard(["a.pdf", "longer-name.md", "c.md"], screen, live=True)

    board.sending(0, 200)
    board.sent(0, 100)
    board.document(1, {"status": "processing", "progress": {"pages_done": 2, "page_count": 5}})
    board.close()
    in_flight = screen.getvalue().rsplit("\x1b[J", 1)[-1].splitlines()

    board.document(0, {"status": "ready", "page_count": 1})
    board.document(1, {"status": "ready", "page_count": 5})
    board.document(2, {"status": "error", "error": {"message": "not a document"}})
    board.close()
    settled = screen.getvalue().rsplit("\x1b[J", 1)[-1].splitlines()

    assert in_flight == [
        "a.pdf           sending 50%",
        "longer-name.md  extracting, page 2/5",
        "1 queued",
    ]
    assert settled == ["c.md            error — not a document"]  # the last to settle
    assert "a.pdf           ready, 1 page\n" in screen.getvalue()
    assert "longer-name.md  ready, 5 pages\n" in screen.getvalue()


class StuckTerminal(io.StringIO):
    """A terminal that takes its time: the first write waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = threading.Event()
        self.let_go = threading.Event()

    def write(self, text: str) -> int:
        if not self.writing.is_set():
            self.writing.set()
            self.let_go.wait(timeout=30)
        return super().write(text)


def test_a_slow_terminal_holds_up_no_other_files_thread_and_loses_no_line() -> None:
    terminal = StuckTerminal()
    board = UploadBoard(["a.pdf", "b.md"], terminal, live=False)
    first = threading.Thread(target=board.sending, args=(0, 100))
    first.start()
    assert terminal.writing.wait(timeout=30), "the first line was never written"
    others_done = threading.Event()

    def other_file() -> None:  # while the first thread is stuck writing its line
        board.sending(1, 10)
        board.sent(1, 10)
        board.document(1, {"status": "ready", "page_count": 1})
        others_done.set()

    threading.Thread(target=other_file).start()
    waited = others_done.wait(timeout=30)
    terminal.let_go.set()
    first.join(timeout=30)
    board.close()

    assert waited, "the second file's thread waited for the first one's write"
    assert terminal.getvalue().splitlines() == [
        "a.pdf: sending 0%",
        "b.md: sending 0%",
        "b.md: ready, 1 page",
    ]
