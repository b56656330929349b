//! [`StreamCore::write_all_then_read`]: a stream's reply and the read after it, as one pair
//! of linked requests where that pays ([`WriteThenRead`], ADR-0040), else as `write_all`
//! then `read`.
//!
//! May not: send or receive by any other path than the stream's own (`write_all_by`,
//! `read`), which keep the lanes and the hints.

use std::io;

use ringsteal_rt::buf::{BufResult, IoBuf, IoBufMut};
use ringsteal_rt::io::WriteThenRead;

use super::{HeldWrite, StreamCore};

impl StreamCore {
    /// `write_all(out)`, then `read(buf)`. A lone reply (the first write after a read on a
    /// stream that writes once per read, which goes by ring anyway: `inline`) followed by a
    /// read that would wait (nothing queued, nothing left over, the read lane free) goes as
    /// one pair of linked requests ([`WriteThenRead`], ADR-0040); anything else as the two
    /// calls.
    pub(crate) async fn write_all_then_read<W: IoBuf, R: IoBufMut>(
        &self,
        out: W,
        buf: R,
    ) -> (BufResult<(), W>, BufResult<usize, R>) {
        let want = out.bytes_init();
        let guard = self.write.acquire().await;
        let inline = want > 0 && self.hints.write_inline();
        let alone = want > 0 && !inline && buf.bytes_total() > 0 && !self.hints.bytes_queued();
        // Never waits for the read lane with the write lane held: a busy read lane (another
        // task's read, waiting for data) would hold up this write.
        let read_lane = if alone {
            self.read.try_acquire().filter(|g| !g.has_leftover())
        } else {
            None
        };
        let Some(read_lane) = read_lane else {
            let held = HeldWrite {
                guard,
                done: 0,
                inline,
            };
            let (res, out) = self.write_all_by(out, false, Some(held)).await;
            return self.then_read(res, out, buf).await;
        };
        self.hints.read();
        let parts = WriteThenRead::new(&self.fd, out, buf, guard, read_lane)
            .await
            .into_parts();
        let (sent, out) = parts.written;
        let sent = match sent {
            Ok(n) if n == want => {
                self.hints.set_bytes_queued(parts.socket_nonempty);
                return ((Ok(()), out), parts.read);
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => {
                let skipped = WriteThenRead::<W, R>::read_not_made(&e);
                return ((Err(e), out), (Err(skipped), parts.read.1));
            }
        };
        // The write stopped short, which breaks the link: the read did not run (`ECANCELED`)
        // unless this kernel ignores `MSG_WAITALL` on a send (the read then ran). The write
        // lane is still held: finish the write before anyone else writes.
        drop(parts.read_lane);
        let guard = parts
            .write_lane
            .expect("kept while the write has not sent everything");
        let held = HeldWrite {
            guard,
            done: sent,
            inline: false,
        };
        let (res, out) = self.write_all_by(out, false, Some(held)).await;
        match parts.read {
            (Err(e), buf) if e.raw_os_error() == Some(libc::ECANCELED) => {
                self.then_read(res, out, buf).await
            }
            (read, buf) => {
                self.hints.set_bytes_queued(parts.socket_nonempty);
                ((res, out), (read, buf))
            }
        }
    }

    /// The read of [`write_all_then_read`](Self::write_all_then_read) made on its own, after
    /// its write's result `res`: not made if the write failed.
    async fn then_read<W, R: IoBufMut>(
        &self,
        res: io::Result<()>,
        out: W,
        buf: R,
    ) -> (BufResult<(), W>, BufResult<usize, R>) {
        match res {
            Ok(()) => ((Ok(()), out), self.read(buf).await),
            Err(e) => {
                let skipped = WriteThenRead::<W, R>::read_not_made(&e);
                ((Err(e), out), (Err(skipped), buf))
            }
        }
    }
}
