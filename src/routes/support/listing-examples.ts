// The listing endpoints' example records for the OpenAPI document, part of EXAMPLES (./examples.ts): what the API
// answers from the shipped sample (data/) to each example request, long texts cut after their start with "…".

const LISTING_SUMMARY = {
  id: 'lst_0000001',
  slug: 'sunny-2-room-apartment-in-the-hague-0000001',
  title: 'Sunny 2-room apartment in The Hague',
  price_eur: 1550,
  size_m2: 80,
  rooms: 2,
  furnishing: 'UPHOLSTERED',
  property_type: 'apartment',
  energy_label: 'G',
  owner_id: 'own_00015',
  image_url: 'https://images.example.nl/listings/lst_0000001/1.jpg',
  created_at: '2025-04-06T08:55:12Z',
  updated_at: '2025-05-11T02:07:07Z',
  location: {
    city: 'The Hague',
    street: 'Oranjestraat',
    number: '17',
    postcode: '2565 WK',
    latitude: 52.103607,
    longitude: 4.292609,
  },
};

export const LISTING_EXAMPLES = {
  listingSummary: LISTING_SUMMARY,
  listingDetail: {
    ...LISTING_SUMMARY,
    description:
      'Apartment of 80 m² with 2 rooms in The Hague. Within cycling distance of the city centre. Features: solar panels. Offered upholstered: flooring, curtains and light fittings included.',
    images: [1, 2, 3, 4, 5].map((n) => `https://images.example.nl/listings/lst_0000001/${n}.jpg`),
    attributes: { year_built: 1981, floor: 3 },
    sources: [{ url: 'https://housinganywhere.example.nl/listing/lst_0000001', type: 'platform' }],
  },
  listingStats: {
    count: 1788,
    min_price_eur: 368,
    max_price_eur: 6200,
    average_price_eur: 1601.7,
    median_price_eur: 1494,
  },
  /** The first two listings similar to lst_0000001 (the path's example). */
  similarListings: [
    {
      id: 'lst_0002054',
      slug: 'modern-2-room-apartment-in-bezuidenhout-0002054',
      title: 'Modern 2-room apartment in Bezuidenhout',
      price_eur: 1550,
      size_m2: 86,
      rooms: 2,
      furnishing: 'UPHOLSTERED',
      property_type: 'apartment',
      energy_label: 'C',
      owner_id: 'own_00015',
      image_url: 'https://images.example.nl/listings/lst_0002054/1.jpg',
      created_at: '2024-07-25T22:36:15Z',
      updated_at: '2024-08-06T20:44:35Z',
      location: {
        city: 'The Hague',
        street: 'Sint Annastraat',
        number: '12',
        postcode: '2593 LF',
        latitude: 52.087241,
        longitude: 4.335097,
      },
    },
    {
      id: 'lst_0000415',
      slug: 'bright-2-room-apartment-in-centrum-0000415',
      title: 'Bright 2-room apartment in Centrum',
      price_eur: 1547,
      size_m2: 55,
      rooms: 2,
      furnishing: 'UPHOLSTERED',
      property_type: 'apartment',
      energy_label: 'A+++',
      owner_id: 'own_00015',
      image_url: 'https://images.example.nl/listings/lst_0000415/1.jpg',
      created_at: '2026-10-24T18:37:56Z',
      updated_at: '2026-10-31T00:00:00Z',
      location: {
        city: 'The Hague',
        street: 'Gevers Deynootweg',
        number: '25',
        postcode: '2511 WF',
        latitude: 52.071784,
        longitude: 4.329204,
      },
    },
  ],
};
