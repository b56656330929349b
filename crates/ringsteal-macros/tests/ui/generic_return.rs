#[ringsteal::test]
async fn makes<T: Default>() -> T {
    T::default()
}

#[ringsteal::test]
async fn bounded<T>() -> Option<T>
where
    T: Clone,
{
    None
}

fn main() {}
