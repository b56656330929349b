//! tokio's number methods (`read_u32`, `write_u64_le`, ...) as provided methods of the
//! owned-buffer traits, written once as macros that `traits.rs` expands inside
//! [`AsyncReadOwned`](super::AsyncReadOwned) and [`AsyncWriteOwned`](super::AsyncWriteOwned).
//!
//! Each first tries the bytes held in memory (`read_exact_from_memory`,
//! `write_all_to_memory`: a `BufReader`'s buffer, a `BufWriter`'s room), which costs a copy;
//! otherwise it reads or writes the number's bytes with one `read_exact` or `write_all` of a
//! small owned buffer, so it keeps every guarantee of those (a stream's dropped `read_exact`
//! gives back what it took; two tasks' `write_all`s never interleave).
//!
//! May not: hold logic beyond the byte order.

/// The read methods: `$name` reads a `$ty` with `$from` (`from_be_bytes` or
/// `from_le_bytes`).
macro_rules! read_number_methods {
    ($($name:ident: $ty:ty, $from:ident, $order:literal;)*) => {$(
        #[doc = concat!(
            "Reads a ", $order, " `", stringify!($ty), "` (", stringify!($ty), "'s size in ",
            "bytes, with one [`read_exact`](Self::read_exact)), as tokio's `",
            stringify!($name), "`. `UnexpectedEof` if the stream ends first."
        )]
        fn $name(&mut self) -> impl ::std::future::Future<Output = ::std::io::Result<$ty>> + Send {
            async move {
                const N: usize = ::std::mem::size_of::<$ty>();
                let mut bytes = [0u8; N];
                if !self.read_exact_from_memory(&mut bytes) {
                    let (res, buf) =
                        self.read_exact(::std::vec![0u8; N].into_boxed_slice()).await;
                    res?;
                    bytes.copy_from_slice(&buf);
                }
                Ok(<$ty>::$from(bytes))
            }
        }
    )*};
}

/// The write methods: `$name` writes a `$ty` with `$to` (`to_be_bytes` or `to_le_bytes`).
macro_rules! write_number_methods {
    ($($name:ident: $ty:ty, $to:ident, $order:literal;)*) => {$(
        #[doc = concat!(
            "Writes `n` as a ", $order, " `", stringify!($ty), "` (one ",
            "[`write_all`](Self::write_all)), as tokio's `", stringify!($name), "`."
        )]
        fn $name(&mut self, n: $ty) -> impl ::std::future::Future<Output = ::std::io::Result<()>> + Send {
            async move {
                let bytes = n.$to();
                if self.write_all_to_memory(&bytes) {
                    return Ok(());
                }
                self.write_all(bytes.to_vec()).await.0
            }
        }
    )*};
}

/// Every number tokio's `AsyncReadExt` reads, in tokio's names.
macro_rules! read_numbers {
    () => {
        read_number_methods! {
            read_u8: u8, from_be_bytes, "one-byte";
            read_i8: i8, from_be_bytes, "one-byte";
            read_u16: u16, from_be_bytes, "big-endian";
            read_i16: i16, from_be_bytes, "big-endian";
            read_u32: u32, from_be_bytes, "big-endian";
            read_i32: i32, from_be_bytes, "big-endian";
            read_u64: u64, from_be_bytes, "big-endian";
            read_i64: i64, from_be_bytes, "big-endian";
            read_u128: u128, from_be_bytes, "big-endian";
            read_i128: i128, from_be_bytes, "big-endian";
            read_f32: f32, from_be_bytes, "big-endian";
            read_f64: f64, from_be_bytes, "big-endian";
            read_u16_le: u16, from_le_bytes, "little-endian";
            read_i16_le: i16, from_le_bytes, "little-endian";
            read_u32_le: u32, from_le_bytes, "little-endian";
            read_i32_le: i32, from_le_bytes, "little-endian";
            read_u64_le: u64, from_le_bytes, "little-endian";
            read_i64_le: i64, from_le_bytes, "little-endian";
            read_u128_le: u128, from_le_bytes, "little-endian";
            read_i128_le: i128, from_le_bytes, "little-endian";
            read_f32_le: f32, from_le_bytes, "little-endian";
            read_f64_le: f64, from_le_bytes, "little-endian";
        }
    };
}

/// Every number tokio's `AsyncWriteExt` writes, in tokio's names.
macro_rules! write_numbers {
    () => {
        write_number_methods! {
            write_u8: u8, to_be_bytes, "one-byte";
            write_i8: i8, to_be_bytes, "one-byte";
            write_u16: u16, to_be_bytes, "big-endian";
            write_i16: i16, to_be_bytes, "big-endian";
            write_u32: u32, to_be_bytes, "big-endian";
            write_i32: i32, to_be_bytes, "big-endian";
            write_u64: u64, to_be_bytes, "big-endian";
            write_i64: i64, to_be_bytes, "big-endian";
            write_u128: u128, to_be_bytes, "big-endian";
            write_i128: i128, to_be_bytes, "big-endian";
            write_f32: f32, to_be_bytes, "big-endian";
            write_f64: f64, to_be_bytes, "big-endian";
            write_u16_le: u16, to_le_bytes, "little-endian";
            write_i16_le: i16, to_le_bytes, "little-endian";
            write_u32_le: u32, to_le_bytes, "little-endian";
            write_i32_le: i32, to_le_bytes, "little-endian";
            write_u64_le: u64, to_le_bytes, "little-endian";
            write_i64_le: i64, to_le_bytes, "little-endian";
            write_u128_le: u128, to_le_bytes, "little-endian";
            write_i128_le: i128, to_le_bytes, "little-endian";
            write_f32_le: f32, to_le_bytes, "little-endian";
            write_f64_le: f64, to_le_bytes, "little-endian";
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::io::test_util::block_on;
    use crate::io::{AsyncReadOwned, AsyncWriteOwned};

    #[test]
    fn every_number_reads_back_as_written_in_its_byte_order() {
        block_on(async {
            let mut sink: Vec<u8> = Vec::new();
            sink.write_u8(0xfe).await.unwrap();
            sink.write_i8(-3).await.unwrap();
            sink.write_u16(0x0102).await.unwrap();
            sink.write_u16_le(0x0102).await.unwrap();
            sink.write_i32(-5).await.unwrap();
            sink.write_i32_le(-5).await.unwrap();
            sink.write_u64(1 << 40).await.unwrap();
            sink.write_i128_le(i128::MIN).await.unwrap();
            sink.write_f32(1.5).await.unwrap();
            sink.write_f64_le(-2.25).await.unwrap();
            assert_eq!(&sink[..6], [0xfe, 0xfd, 1, 2, 2, 1], "byte orders");
            let mut src: &[u8] = &sink;
            assert_eq!(src.read_u8().await.unwrap(), 0xfe);
            assert_eq!(src.read_i8().await.unwrap(), -3);
            assert_eq!(src.read_u16().await.unwrap(), 0x0102);
            assert_eq!(src.read_u16_le().await.unwrap(), 0x0102);
            assert_eq!(src.read_i32().await.unwrap(), -5);
            assert_eq!(src.read_i32_le().await.unwrap(), -5);
            assert_eq!(src.read_u64().await.unwrap(), 1 << 40);
            assert_eq!(src.read_i128_le().await.unwrap(), i128::MIN);
            assert_eq!(src.read_f32().await.unwrap(), 1.5);
            assert_eq!(src.read_f64_le().await.unwrap(), -2.25);
            assert!(src.is_empty());
            let mut short: &[u8] = &[1, 2, 3];
            let err = short.read_u32().await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        });
    }
}
