import { silenceMarks } from './silence-marks';
import { roomView } from './test-rooms';

const S = 1000;
const NOW = 1_000_000 * S;
const SILENCE = 90 * S;

describe('silenceMarks', () => {
  it('marks a room silent past the timeout with its last ping, and only such a room', () => {
    const marks = silenceMarks([
      roomView('hung', { lastPingAt: NOW - 91 * S }),
      roomView('pinging', { lastPingAt: NOW - 5 * S }),
      roomView('at-the-timeout', { lastPingAt: NOW - 90 * S }),
      roomView('occupied-hung', { status: 'occupied', lastPingAt: NOW - 200 * S }),
    ], NOW, SILENCE);
    expect(marks).toEqual({ mark: [{ name: 'hung', since: NOW - 91 * S }, { name: 'occupied-hung', since: NOW - 200 * S }], clear: [], silent: 2 });
  });

  it('leaves out rooms that never pinged (the init timeout\'s), validation rooms and rooms going away', () => {
    const marks = silenceMarks([
      roomView('never-pinged', { status: 'pending', createdAt: NOW - 500 * S }),
      roomView('validation', { validation: true, lastPingAt: NOW - 100 * S }),
      roomView('terminating', { terminating: true, lastPingAt: NOW - 100 * S }),
      roomView('terminating-marked', { terminating: true, lastPingAt: NOW - 100 * S, silentSince: NOW - 100 * S }),
    ], NOW, SILENCE);
    expect(marks).toEqual({ mark: [], clear: [], silent: 0 });
  });

  it('keeps a mark while no later ping is seen, and clears it once one is', () => {
    const marks = silenceMarks([
      roomView('still-silent', { lastPingAt: NOW - 100 * S, silentSince: NOW - 100 * S }),
      roomView('heard-again', { lastPingAt: NOW - S, silentSince: NOW - 100 * S }),
      // A ping after the mark, though the room is silent past the timeout again: cleared, marked anew at the next check.
      roomView('heard-and-silent-again', { lastPingAt: NOW - 95 * S, silentSince: NOW - 200 * S }),
    ], NOW, SILENCE);
    expect(marks).toEqual({ mark: [], clear: ['heard-again', 'heard-and-silent-again'], silent: 2 });
  });

  it('clears a mark on a room that is not silent, whatever it says (written by hand with kubectl, dated ahead)', () => {
    const marks = silenceMarks([
      roomView('hand-marked', { lastPingAt: NOW - 5 * S, silentSince: NOW + 3600 * S }),
      roomView('hand-marked-silent', { lastPingAt: NOW - 100 * S, silentSince: NOW + 3600 * S }),
    ], NOW, SILENCE);
    // The second is silent and heard before its mark: kept, as a mark of the operator's would be.
    expect(marks).toEqual({ mark: [], clear: ['hand-marked'], silent: 1 });
  });

  it('with the timeout 0 marks nothing and clears every mark', () => {
    const marks = silenceMarks([
      roomView('marked', { lastPingAt: NOW - 500 * S, silentSince: NOW - 500 * S }),
      roomView('silent', { lastPingAt: NOW - 500 * S }),
    ], NOW, 0);
    expect(marks).toEqual({ mark: [], clear: ['marked'], silent: 0 });
  });
});
