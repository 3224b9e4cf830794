//! `mcbench top`: memcache-top's live view of several servers, refreshed
//! every `-i`, with its flaws fixed (`server_stats::top`). On a terminal
//! it draws in the alternate screen with the terminal in raw mode, quits
//! on `q` (exit 0), Ctrl-C (130) or SIGTERM (143) and always restores the
//! terminal (crossterm, also on a panic). Without a terminal it prints one
//! frame after another, for scripts and logs.

use crate::cli::TopArgs;
use crate::error::exit;
use crate::server_stats::top::{render, Reading, Row};
use crate::server_stats::StatsConn;
use crate::spec::Address;
use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyModifiers};
use crossterm::{cursor, execute, queue, terminal};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The shortest refresh: each one asks every server for its stats.
const MIN_INTERVAL: Duration = Duration::from_millis(100);

pub fn top(args: &TopArgs) -> i32 {
    let names = match super::inspect::names(&args.target) {
        Ok(n) => n,
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            return exit::USAGE;
        }
    };
    if args.interval < MIN_INTERVAL {
        crate::stderr_line!("mcbench: error: -i must be at least {MIN_INTERVAL:?}");
        return exit::USAGE;
    }
    let stop = match super::install_signal_flag() {
        Ok(s) => s,
        Err(e) => {
            crate::stderr_line!("mcbench: error: {e}");
            return exit::FAILED;
        }
    };
    let interactive = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let screen = if interactive {
        match Screen::enter() {
            Ok(s) => Some(s),
            Err(e) => {
                crate::stderr_line!("mcbench: error: cannot set up the terminal: {e}");
                return exit::FAILED;
            }
        }
    } else {
        None
    };
    let mut watch = Watch::new(names, args.target.timeout, stop.clone());
    let mut frames = 0;
    loop {
        let frame = format!(
            "mcbench top    (refresh: {:?}; rates and HIT % over the measured interval; TIME: stats round trip on a kept connection; q quits)\n\n{}",
            args.interval,
            render(&watch.read())
        );
        let shown = match &screen {
            Some(s) => s.show(&frame),
            None => writeln!(std::io::stdout(), "{frame}").and_then(|()| std::io::stdout().flush()),
        };
        if let Err(e) = shown {
            crate::stderr_line!("mcbench: error: cannot write to stdout: {e}");
            return exit::FAILED;
        }
        frames += 1;
        if args.iterations.is_some_and(|n| frames >= n) {
            return exit::OK;
        }
        if let Some(code) = wait(args.interval, screen.is_some(), &stop) {
            return code;
        }
    }
}

/// Waits `interval`; the exit code if the user quits or a signal comes.
fn wait(interval: Duration, keys: bool, stop: &AtomicUsize) -> Option<i32> {
    let until = Instant::now() + interval;
    loop {
        match stop.load(Ordering::Relaxed) {
            0 => {}
            sig => return Some(exit::of_signal(sig)),
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        let step = left.min(Duration::from_millis(100));
        if !keys {
            std::thread::sleep(step);
            continue;
        }
        if !event::poll(step).unwrap_or(false) {
            continue;
        }
        if let Ok(Event::Key(key)) = event::read() {
            if let Some(code) = quits(key) {
                return Some(code);
            }
        }
    }
}

/// `q` or Esc quit (0); Ctrl-C, which raw mode delivers as a key, as its
/// signal would (130).
fn quits(key: KeyEvent) -> Option<i32> {
    match key.code {
        KeyCode::Char('q' | 'Q') | KeyCode::Esc => Some(exit::OK),
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Some(exit::SIGINT),
        _ => None,
    }
}

/// Each server's kept connection and last reading.
struct Watch {
    names: Vec<String>,
    timeout: Duration,
    /// The signal flag: a stats exchange waits a moment more once it is set.
    stop: std::sync::Arc<AtomicUsize>,
    conns: Vec<Option<StatsConn>>,
    last: Vec<Option<Reading>>,
    began: Instant,
}

impl Watch {
    fn new(names: Vec<String>, timeout: Duration, stop: std::sync::Arc<AtomicUsize>) -> Self {
        let n = names.len();
        Watch {
            names,
            timeout,
            stop,
            conns: (0..n).map(|_| None).collect(),
            last: vec![None; n],
            began: Instant::now(),
        }
    }

    /// A row per server, from a `stats` now and the one before.
    fn read(&mut self) -> Vec<Row> {
        (0..self.names.len()).map(|s| self.row(s)).collect()
    }

    fn row(&mut self, s: usize) -> Row {
        let name = self.names[s].clone();
        if self.conns[s].is_none() {
            let stop = Some(self.stop.clone());
            let opened = match Address::resolve(&name) {
                Ok(a) => StatsConn::connect(&a, self.timeout, stop).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match opened {
                Ok(c) => self.conns[s] = Some(c),
                Err(e) => return Row::failed(&name, e),
            }
        }
        let conn = self.conns[s].as_mut().expect("just opened");
        let connect = conn.connect_time;
        match conn.query(None) {
            Ok((stats, rtt)) => {
                let cur = Reading {
                    stats,
                    at_s: self.began.elapsed().as_secs_f64(),
                    rtt,
                };
                let row = Row::of(&name, self.last[s].as_ref(), &cur, connect);
                self.last[s] = Some(cur);
                row
            }
            Err(e) => {
                self.conns[s] = None;
                Row::failed(&name, e.to_string())
            }
        }
    }
}

/// The terminal while `top` draws: raw mode, the alternate screen, no
/// cursor; put back on drop.
struct Screen;

impl Screen {
    fn enter() -> std::io::Result<Screen> {
        terminal::enable_raw_mode()?;
        let screen = Screen;
        execute!(
            std::io::stdout(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )?;
        // A panic unwinds through `Screen`'s drop; its message would be
        // lost in the alternate screen without this.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            Screen::restore();
            hook(info);
        }));
        Ok(screen)
    }

    fn show(&self, frame: &str) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        queue!(
            out,
            cursor::MoveTo(0, 0),
            terminal::Clear(terminal::ClearType::All)
        )?;
        for line in frame.lines() {
            // Raw mode: a newline does not return the carriage.
            write!(out, "{line}\r\n")?;
        }
        out.flush()
    }

    fn restore() {
        let _ = execute!(
            std::io::stdout(),
            cursor::Show,
            terminal::LeaveAlternateScreen
        );
        let _ = terminal::disable_raw_mode();
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        Screen::restore();
    }
}
