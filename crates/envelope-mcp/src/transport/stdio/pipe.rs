//! A pipe or socket of our own (stdin, stdout) on the runtime's event loop: non-blocking
//! reads and writes with readiness from epoll.

use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// File descriptor `fd`, borrowed (it is never closed here; whoever made the `Pipe` keeps
/// it open while the `Pipe` lives); its blocking mode is restored on drop.
pub struct Pipe {
    fd: AsyncFd<RawFd>,
    flags: i32,
}

impl Pipe {
    /// `fd` when it is a pipe or a socket that the event loop accepts; `None` otherwise
    /// (a file, a terminal), and nothing is changed.
    pub fn new(fd: RawFd) -> Option<Pipe> {
        // SAFETY: fstat writes into the zeroed struct; fcntl reads and sets flags of `fd`;
        // the caller keeps `fd` open while the `Pipe` lives (stdin and stdout are never
        // closed by the proxy), as `AsyncFd::register` requires.
        unsafe {
            let mut stat: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut stat) != 0 {
                return None;
            }
            let kind = stat.st_mode & libc::S_IFMT;
            if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
                return None;
            }
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                return None;
            }
            match AsyncFd::register(fd) {
                Ok(fd) => Some(Pipe { fd, flags }),
                Err(_) => {
                    libc::fcntl(fd, libc::F_SETFL, flags);
                    None
                }
            }
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: restores the flags read in `new`.
        unsafe {
            libc::fcntl(*self.fd.get_ref(), libc::F_SETFL, self.flags);
        }
    }
}

/// The result of a libc read or write: the count, or the error of `errno`.
fn io_result(n: isize) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

impl AsyncRead for Pipe {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let read = guard.try_io(|fd| {
                // SAFETY: reads at most `unfilled.len()` bytes into `unfilled`.
                io_result(unsafe {
                    libc::read(*fd.get_ref(), unfilled.as_mut_ptr().cast(), unfilled.len())
                })
            });
            match read {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Pipe {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            let written = guard.try_io(|fd| {
                // SAFETY: writes at most `data.len()` bytes from `data`.
                io_result(unsafe { libc::write(*fd.get_ref(), data.as_ptr().cast(), data.len()) })
            });
            match written {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[tokio::test]
    async fn bytes_through_a_pipe_and_flags_restored() {
        let mut fds = [0; 2];
        // SAFETY: pipe fills the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (mut reader, mut writer) = (Pipe::new(fds[0]).unwrap(), Pipe::new(fds[1]).unwrap());
        writer.write_all(b"frame\n").await.unwrap();
        let mut got = [0u8; 6];
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"frame\n");
        drop(reader);
        // SAFETY: reads the flags of our own descriptor.
        let flags = unsafe { libc::fcntl(fds[0], libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0);
        drop(writer);
        // SAFETY: closes the descriptors this test opened.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }

    #[test]
    fn a_regular_file_is_not_a_pipe() {
        let file = tempfile::tempfile().unwrap();
        use std::os::fd::AsRawFd as _;
        assert!(Pipe::new(file.as_raw_fd()).is_none());
    }
}
